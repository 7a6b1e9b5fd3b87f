#!/bin/sh
# provision-ci.sh: the steps of provision's pipeline, shared by the GitHub
# action (action.yml beside this file) and the GitLab CI template
# (.gitlab/provision.gitlab-ci.yml, which runs the copy in the release
# archive). POSIX sh; needs curl, jq and sha256sum, and gh on GitHub.
#
#   provision-ci.sh install    install provision $PROVISION_VERSION
#   provision-ci.sh plan       plan a pull request, keep its one comment up to date
#   provision-ci.sh apply      on merge, apply the plan the pull request reviewed
#   provision-ci.sh snapshot   record the live state for pull requests from forks
#
# What it reads (the action's inputs and the template's variables set them):
#   PROVISION_VERSION   release to install, vX.Y.Z
#   PROVISION_INSTALL   release (default): the archive, its checksum checked; go: go install
#   PROVISION_RELEASES  where the archives are (default: this repository's GitHub releases)
#   PROVISION_BIN       folder to install into (default: $HOME/.provision/bin)
#   PROVISION_DIR       the specs (default: specs)
#   PROVISION_PLAN      the saved plan (default: provision.plan)
#   PROVISION_SNAPSHOT  the snapshot file, written by snapshot, read by plan for a fork
#   PROVISION_SNAPSHOT_ARTIFACT  the name it is published under (default: provision-snapshot)
#   PROVISION_LOCK_TIMEOUT  how long an apply waits for the project's lock held by
#                       another run (default 5m)
#   PROVISION_ON_PUSH   a push to the default branch that merged no pull request:
#                       check (default: fail when it plans any change) or apply
#   GITLAB_TOKEN        GitLab only: a token that may read the API and write notes
# and the variables each CI system sets (GITHUB_*, CI_*).
set -eu

module=github.com/provision-dev/provision
dir=${PROVISION_DIR:-specs}
plan=${PROVISION_PLAN:-provision.plan}
snapshot=${PROVISION_SNAPSHOT:-provision-snapshot.json}
artifact=${PROVISION_SNAPSHOT_ARTIFACT:-provision-snapshot}
# The marker that finds this pipeline's comment among a pull request's,
# one per specs folder.
marker="<!-- provision-plan: $dir -->"
lock_timeout=${PROVISION_LOCK_TIMEOUT:-5m}

say() { printf 'provision-ci: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# output NAME VALUE: a step output (GitHub) or a line of the log.
output() {
	if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi
	say "$1=$2"
}

ci() {
	if [ "${GITHUB_ACTIONS:-}" = true ]; then echo github
	elif [ "${GITLAB_CI:-}" = true ]; then echo gitlab
	else die "neither GITHUB_ACTIONS nor GITLAB_CI is true: run this in GitHub Actions or GitLab CI"
	fi
}

# gitlab METHOD PATH [curl args...]: a GitLab API call.
gitlab() {
	m=$1 p=$2
	shift 2
	[ -n "${GITLAB_TOKEN:-}" ] || die "GITLAB_TOKEN is not set: the template needs a token that may read the API and write merge request notes"
	curl -fsS -X "$m" -H "PRIVATE-TOKEN: $GITLAB_TOKEN" "$CI_API_V4_URL/projects/$CI_PROJECT_ID$p" "$@"
}

install() {
	version=${PROVISION_VERSION:?set PROVISION_VERSION to the release to install, vX.Y.Z}
	bin=${PROVISION_BIN:-$HOME/.provision/bin}
	mkdir -p "$bin"
	if [ "${PROVISION_INSTALL:-release}" = go ]; then
		GOBIN=$bin go install "$module/cmd/provision@$version"
	else
		os=$(uname -s | tr '[:upper:]' '[:lower:]')
		case $(uname -m) in
		x86_64 | amd64) arch=amd64 ;;
		aarch64 | arm64) arch=arm64 ;;
		*) die "no release for the machine $(uname -m)" ;;
		esac
		base=${PROVISION_RELEASES:-https://$module/releases/download}/$version
		name=provision_${version}_${os}_${arch}.tar.gz
		tmp=$(mktemp -d)
		curl -fsSL -o "$tmp/SHA256SUMS" "$base/SHA256SUMS"
		curl -fsSL -o "$tmp/$name" "$base/$name"
		grep "  $name\$" "$tmp/SHA256SUMS" >"$tmp/sum" || die "SHA256SUMS of $version does not list $name"
		(cd "$tmp" && sha256sum -c sum >/dev/null) || die "$name does not match its checksum in SHA256SUMS: not installed"
		tar -xzf "$tmp/$name" -C "$tmp" provision
		mv "$tmp/provision" "$bin/provision"
		rm -rf "$tmp"
	fi
	if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin" >>"$GITHUB_PATH"; fi
	say "installed $("$bin/provision" version | head -n 1) into $bin"
}

# fork says whether the pipeline runs for a pull request from a fork,
# which gets no credentials.
fork() {
	case $(ci) in
	github) [ "$(jq -r --arg r "$GITHUB_REPOSITORY" '.pull_request.head.repo.full_name // $r' "$GITHUB_EVENT_PATH")" != "$GITHUB_REPOSITORY" ] ;;
	gitlab) [ "${CI_MERGE_REQUEST_SOURCE_PROJECT_ID:-$CI_PROJECT_ID}" != "$CI_PROJECT_ID" ] ;;
	esac
}

# change is the pull request's number: the one the pipeline runs for, or
# the one a merge's apply comments on (PROVISION_CHANGE).
change() {
	if [ -n "${PROVISION_CHANGE:-}" ]; then echo "$PROVISION_CHANGE"; return; fi
	case $(ci) in
	github) jq -r '.pull_request.number // .number // empty' "$GITHUB_EVENT_PATH" ;;
	gitlab) echo "${CI_MERGE_REQUEST_IID:-}" ;;
	esac
}

# fetch_snapshot downloads the snapshot the default branch's pipeline
# published last into $snapshot.
fetch_snapshot() {
	case $(ci) in
	github)
		branch=$(jq -r '.repository.default_branch' "$GITHUB_EVENT_PATH")
		run=$(gh run list --repo "$GITHUB_REPOSITORY" --branch "$branch" --status success --limit 20 \
			--json databaseId --jq '.[].databaseId' | head -n 1)
		[ -n "$run" ] || die "no successful run on $branch has published $artifact: run the workflow there first"
		tmp=$(mktemp -d)
		gh run download "$run" --repo "$GITHUB_REPOSITORY" --name "$artifact" --dir "$tmp"
		mv "$tmp/$(basename "$snapshot")" "$snapshot"
		rm -rf "$tmp"
		;;
	gitlab)
		curl -fsS -H "JOB-TOKEN: $CI_JOB_TOKEN" -o "$snapshot" \
			"$CI_API_V4_URL/projects/$CI_PROJECT_ID/jobs/artifacts/$CI_DEFAULT_BRANCH/raw/$snapshot?job=provision-snapshot"
		;;
	esac
}

# age says how long ago an RFC 3339 time was, in hours or minutes.
age() {
	then=$(date -u -d "$1" +%s 2>/dev/null) || { echo "of unknown age"; return; }
	mins=$((($(date -u +%s) - then) / 60))
	if [ "$mins" -ge 120 ]; then echo "$((mins / 60)) hours old"; else echo "$mins minutes old"; fi
}

# limit is the longest comment the CI system takes, in characters:
# GitHub's 65,536, GitLab's 1,000,000.
limit() {
	case $(ci) in
	github) echo 65536 ;;
	gitlab) echo 1000000 ;;
	esac
}

# mark I: the first line of part I of the plan comment for $dir.
mark() {
	if [ "$1" = 1 ]; then echo "$marker"; else echo "<!-- provision-plan: $dir (part $1) -->"; fi
}

# api_or_die WHAT CMD...: runs an API call; one that fails fails the job,
# saying what was refused and the API's answer (on stderr, above).
api_or_die() {
	what=$1
	shift
	"$@" >/dev/null || die "$what was refused by the API (its answer is above): the job fails, so that nobody merges on a plan the pull request does not show"
}

# comment FILE...: the pull request's provision comments for $dir, one
# per FILE (the parts of a long plan, each under the limit), each made or
# updated in place; comments of parts no longer needed are deleted. Any
# call the API refuses fails the job.
comment() {
	n=$(change)
	[ -n "$n" ] || die "no pull request or merge request to comment on"
	sel='.[] | select((.body | startswith($m + " -->")) or (.body | startswith($m + " (part "))) | .id'
	case $(ci) in
	github)
		ids=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$n/comments" --jq ".[]" | jq -rs --arg m "<!-- provision-plan: $dir" "$sel" | sort -n) ||
			die "reading the comments of #$n was refused by the API (its answer is above)"
		;;
	gitlab)
		ids=$(gitlab GET "/merge_requests/$n/notes?per_page=100&sort=asc" | jq -r --arg m "<!-- provision-plan: $dir" "$sel" | sort -n) ||
			die "reading the notes of !$n was refused by the API (its answer is above)"
		;;
	esac
	i=0
	body=$(mktemp)
	max=$(limit)
	for part in "$@"; do
		i=$((i + 1))
		{ mark "$i"; cat "$part"; } >"$body"
		size=$(wc -m <"$body")
		[ "$size" -le "$max" ] || die "part $i of the plan comment is $size characters, over the limit of $max: not posted"
		id=$(echo "$ids" | sed -n "${i}p")
		case $(ci) in
		github)
			if [ -n "$id" ]; then
				api_or_die "updating the plan comment $id on #$n" gh api -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body"
				say "updated the plan comment $id on #$n (part $i of $#)"
			else
				api_or_die "commenting on #$n" gh api -X POST "repos/$GITHUB_REPOSITORY/issues/$n/comments" -F "body=@$body"
				say "commented the plan on #$n (part $i of $#)"
			fi
			;;
		gitlab)
			data=$(jq -Rs '{body: .}' <"$body")
			if [ -n "$id" ]; then
				api_or_die "updating the plan note $id on !$n" gitlab PUT "/merge_requests/$n/notes/$id" -H 'Content-Type: application/json' -d "$data"
				say "updated the plan note $id on !$n (part $i of $#)"
			else
				api_or_die "commenting on !$n" gitlab POST "/merge_requests/$n/notes" -H 'Content-Type: application/json' -d "$data"
				say "commented the plan on !$n (part $i of $#)"
			fi
			;;
		esac
	done
	for id in $(echo "$ids" | sed -n "$((i + 1)),\$p"); do
		case $(ci) in
		github) api_or_die "deleting the old plan comment $id on #$n" gh api -X DELETE "repos/$GITHUB_REPOSITORY/issues/comments/$id" ;;
		gitlab) api_or_die "deleting the old plan note $id on !$n" gitlab DELETE "/merge_requests/$n/notes/$id" ;;
		esac
		say "deleted the plan comment $id of a part no longer needed"
	done
	rm -f "$body"
}

# plan_to FILE: plans $dir (from the snapshot for a fork) into FILE, its
# output in plan.out; sets planned to plan's exit code, and fork_note to
# what the comment says of a fork's plan.
plan_to() {
	set -- plan -detailed-exitcode -no-color "-out=$1"
	fork_note=
	if fork; then
		fetch_snapshot
		taken=$(jq -r '.taken_at' "$snapshot")
		fork_note=$(printf 'Planned without credentials (a pull request from a fork) from the snapshot `%s` that %s published, taken %s (%s). This plan is never applied: the merge applies a plan the base repository makes against the live systems, and only when it makes these changes.' \
			"$artifact" "the default branch's pipeline" "$taken" "$(age "$taken")")
		set -- "$@" "-snapshot=$snapshot"
	fi
	planned=0
	provision "$@" "$dir" >plan.out 2>&1 || planned=$?
	cat plan.out
}

# comment_plan HEADER FILE: comments the plan plan_to made into FILE (or
# its failure, from plan.out) under HEADER, in parts when it is long. It
# is never called in an || list, so that a failed comment fails the job.
comment_plan() {
	text=$(mktemp)
	parts=$(mktemp -d)
	printf '%s\n\n' "$1" >"$text"
	if [ -n "$fork_note" ]; then printf '%s\n\n' "$fork_note" >>"$text"; fi
	if [ "$planned" != 0 ] && [ "$planned" != 2 ]; then
		printf '**The plan failed.**\n\n```\n%s\n```\n' "$(tail -c 60000 plan.out)" >>"$text"
		set -- "$text"
	else
		provision show -format=markdown "-parts-dir=$parts" "$2"
		cat "$parts/part-1.md" >>"$text"
		mv "$text" "$parts/part-1.md"
		set -- $(ls "$parts"/part-*.md | sort -t- -k2 -n)
	fi
	comment "$@"
	rm -rf "$text" "$parts" plan.out
	output exitcode "$planned"
}

sha() {
	case $(ci) in
	github) jq -r '.pull_request.head.sha // empty' "$GITHUB_EVENT_PATH" ;;
	gitlab) echo "${CI_COMMIT_SHA:-}" ;;
	esac
}

plan() {
	plan_to "$plan"
	comment_plan "provision plan of \`$dir\` at $(sha)" "$plan"
	[ "$planned" = 0 ] || [ "$planned" = 2 ] || exit 1
	output plan "$plan"
}

# merged_change is the number of the pull request the pushed commit
# merged, empty when none did.
merged_change() {
	case $(ci) in
	github) gh api "repos/$GITHUB_REPOSITORY/commits/$GITHUB_SHA/pulls" --jq '.[0].number // empty' ;;
	gitlab) gitlab GET "/repository/commits/$CI_COMMIT_SHA/merge_requests" | jq -r '.[0].iid // empty' ;;
	esac
}

# fetch_plan downloads the saved plan of change $1's last plan into $plan.
fetch_plan() {
	case $(ci) in
	github)
		head=$(gh api "repos/$GITHUB_REPOSITORY/pulls/$1" --jq .head.sha)
		run=$(gh run list --repo "$GITHUB_REPOSITORY" --commit "$head" --event pull_request --status success --limit 1 \
			--json databaseId --jq '.[0].databaseId // empty')
		[ -n "$run" ] || return 1
		tmp=$(mktemp -d)
		gh run download "$run" --repo "$GITHUB_REPOSITORY" --name "provision-plan-$1" --dir "$tmp" || return 1
		mv "$tmp/$(basename "$plan")" "$plan"
		rm -rf "$tmp"
		;;
	gitlab)
		pipeline=$(gitlab GET "/merge_requests/$1" | jq -r '.head_pipeline.id // empty')
		[ -n "$pipeline" ] || return 1
		job=$(gitlab GET "/pipelines/$pipeline/jobs?scope=success" | jq -r '.[] | select(.name == "provision-plan") | .id' | head -n 1)
		[ -n "$job" ] || return 1
		gitlab GET "/jobs/$job/artifacts/$plan" -o "$plan"
		;;
	esac
}

# changes PLANFILE: what the plan does, for comparing two plans: each
# change that sends something, its address, action and requests.
changes() {
	provision show -json "$1" | jq -cS '[.changes[] | select(.action != "no-op") | {address, action, requests}]'
}

# apply_merge_commit N: the reviewed plan of #N was refused (the live
# systems or the specs moved since it was made, or it was made from a
# snapshot): the merge commit is planned again, and applied only when it
# makes exactly the changes #N reviewed; otherwise the new plan goes on
# #N and the job fails.
apply_merge_commit() {
	say "the plan #$1 reviewed cannot be applied as it is (see above); planning the merge commit again"
	plan_to merge.plan
	if [ "$planned" = 0 ] || [ "$planned" = 2 ]; then
		if [ "$(changes merge.plan)" = "$(changes "$plan")" ]; then
			provision apply -no-color "-lock-timeout=$lock_timeout" merge.plan || die "the merge commit's plan, which makes the changes #$1 reviewed, failed to apply (see above)"
			say "applied the merge commit's plan, which makes exactly the changes #$1 reviewed"
			return
		fi
	fi
	PROVISION_CHANGE=$1 comment_plan "provision: the plan reviewed on this pull request was not applied after the merge: the merge commit plans other changes (or none could be planned), shown here. Nothing was applied. Review them, then apply from the default branch (a push there, or a re-run of the merge's job once this is the plan you want)." merge.plan
	exit 1
}

# push_apply: a push that merged no pull request. With
# PROVISION_ON_PUSH=apply it is planned and applied; with check (the
# default) the job fails when the default branch plans any change, so that
# live and main never part without a red job.
push_apply() {
	sha=${GITHUB_SHA:-}${CI_COMMIT_SHA:-}
	case ${PROVISION_ON_PUSH:-check} in
	apply)
		say "the push $sha merged no pull request; PROVISION_ON_PUSH=apply: planning and applying the default branch"
		provision apply -auto-approve -no-color "-lock-timeout=$lock_timeout" "$dir" || die "applying the default branch at $sha failed (see above)"
		;;
	check)
		code=0
		provision plan -detailed-exitcode -no-color "$dir" || code=$?
		case $code in
		0) say "the push $sha merged no pull request, and the default branch plans no change: live matches it" ;;
		2) die "the push $sha merged no pull request, and the default branch plans the changes above, which nobody reviewed: nothing is applied. Open a pull request for them, or set PROVISION_ON_PUSH=apply to apply pushes" ;;
		*) die "planning the default branch at $sha failed (see above)" ;;
		esac
		;;
	*) die "PROVISION_ON_PUSH is apply or check, not $PROVISION_ON_PUSH" ;;
	esac
}

apply() {
	n=$(merged_change)
	if [ -z "$n" ]; then
		push_apply
		return
	fi
	fetch_plan "$n" || die "the reviewed plan of #$n was not found (its plan job did not succeed, or its artifact expired): nothing is applied; plan it again"
	say "applying the plan #$n reviewed; waiting up to $lock_timeout for the project's lock if another run holds it"
	applied=0
	provision apply -no-color "-lock-timeout=$lock_timeout" "$plan" >apply.out 2>&1 || applied=$?
	cat apply.out
	if [ "$applied" = 0 ]; then
		say "applied the plan #$n reviewed"
		return
	fi
	if grep -q "(-lock-timeout)" apply.out; then
		die "the project's lock was held by another run for all of $lock_timeout (see above): nothing was applied. Re-run this job once that run is done, or raise PROVISION_LOCK_TIMEOUT"
	fi
	apply_merge_commit "$n"
}

snapshot() {
	provision snapshot -out "$snapshot" "$dir"
	output snapshot "$snapshot"
}

case ${1:-} in
install | plan | apply | snapshot) "$1" ;;
*) die "usage: provision-ci.sh install | plan | apply | snapshot" ;;
esac
