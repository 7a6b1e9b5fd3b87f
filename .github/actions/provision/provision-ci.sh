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

# comment FILE: the pull request's one provision comment, for $dir, made
# or updated in place with FILE's text.
comment() {
	n=$(change)
	[ -n "$n" ] || die "no pull request or merge request to comment on"
	body=$(mktemp)
	{ echo "$marker"; cat "$1"; } >"$body"
	case $(ci) in
	github)
		id=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$n/comments" \
			--jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
		if [ -n "$id" ]; then
			gh api -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body" >/dev/null
			say "updated the plan comment $id on #$n"
		else
			gh api -X POST "repos/$GITHUB_REPOSITORY/issues/$n/comments" -F "body=@$body" >/dev/null
			say "commented the plan on #$n"
		fi
		;;
	gitlab)
		id=$(gitlab GET "/merge_requests/$n/notes?per_page=100&sort=asc" |
			jq -r --arg m "$marker" '.[] | select(.body | startswith($m)) | .id' | head -n 1)
		data=$(jq -Rs '{body: .}' <"$body")
		if [ -n "$id" ]; then
			gitlab PUT "/merge_requests/$n/notes/$id" -H 'Content-Type: application/json' -d "$data" >/dev/null
			say "updated the plan note $id on !$n"
		else
			gitlab POST "/merge_requests/$n/notes" -H 'Content-Type: application/json' -d "$data" >/dev/null
			say "commented the plan on !$n"
		fi
		;;
	esac
	rm -f "$body"
}

# plan_and_comment HEADER: plans $dir (from the snapshot for a fork),
# saves the plan, and comments it under HEADER; returns plan's exit code.
plan_and_comment() {
	text=$(mktemp)
	printf '%s\n\n' "$1" >"$text"
	set -- plan -detailed-exitcode -no-color "-out=$plan"
	if fork; then
		fetch_snapshot
		taken=$(jq -r '.taken_at' "$snapshot")
		printf 'Planned without credentials (a pull request from a fork) from the snapshot `%s` that %s published, taken %s (%s). An apply on merge plans again against the live systems.\n\n' \
			"$artifact" "the default branch's pipeline" "$taken" "$(age "$taken")" >>"$text"
		set -- "$@" "-snapshot=$snapshot"
	fi
	code=0
	provision "$@" "$dir" >plan.out 2>&1 || code=$?
	cat plan.out
	if [ "$code" != 0 ] && [ "$code" != 2 ]; then
		printf '**The plan failed.**\n\n```\n%s\n```\n' "$(cat plan.out)" >>"$text"
	else
		provision show -format=markdown "$plan" >>"$text"
	fi
	comment "$text"
	rm -f "$text" plan.out
	output exitcode "$code"
	return "$code"
}

sha() {
	case $(ci) in
	github) jq -r '.pull_request.head.sha // empty' "$GITHUB_EVENT_PATH" ;;
	gitlab) echo "${CI_COMMIT_SHA:-}" ;;
	esac
}

plan() {
	code=0
	plan_and_comment "provision plan of \`$dir\` at $(sha)" || code=$?
	[ "$code" = 0 ] || [ "$code" = 2 ] || exit 1
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

apply() {
	n=$(merged_change)
	[ -n "$n" ] || die "the pushed commit ${GITHUB_SHA:-}${CI_COMMIT_SHA:-} merged no pull request: nothing was reviewed, nothing is applied"
	fetch_plan "$n" || die "the reviewed plan of #$n was not found (its plan job did not succeed, or its artifact expired): nothing is applied; plan it again"
	if provision apply -no-color "$plan"; then
		say "applied the plan #$n reviewed"
		return
	fi
	say "the plan #$n reviewed was not applied, or not all of it (see above: a plan is refused when the live systems or the specs moved since it was made); planning again for review on #$n"
	PROVISION_CHANGE=$n plan_and_comment "provision: the plan reviewed on this pull request was not applied after the merge, or not all of it (see the merge's pipeline). What applying the specs of the default branch now does:" || true
	exit 1
}

snapshot() {
	provision snapshot -out "$snapshot" "$dir"
	output snapshot "$snapshot"
}

case ${1:-} in
install | plan | apply | snapshot) "$1" ;;
*) die "usage: provision-ci.sh install | plan | apply | snapshot" ;;
esac
