#!/bin/sh
# provision-ci.sh: the steps of provision's pipeline, shared by the GitHub
# action (action.yml beside this file) and the GitLab CI template
# (.gitlab/provision.gitlab-ci.yml, which runs the copy in the release
# archive). POSIX sh; needs curl, jq and sha256sum, and unzip on GitHub.
# It speaks to each CI system's REST API with curl: GitHub's at
# $GITHUB_API_URL (the runner sets it) with $GITHUB_TOKEN, GitLab's at
# $CI_API_V4_URL with $GITLAB_TOKEN.
#
#   provision-ci.sh install    install provision $PROVISION_VERSION
#   provision-ci.sh plan       plan a pull request, keep its one comment up to date
#   provision-ci.sh apply      on merge, apply the plan the pull request reviewed
#   provision-ci.sh snapshot   record the live state for pull requests from forks
#   provision-ci.sh history    print each project's history of applies
#   provision-ci.sh drift      on a schedule: plan main against live, keep one issue per project
#
# What it reads (the action's inputs and the template's variables set them):
#   PROVISION_VERSION   release to install, vX.Y.Z
#   PROVISION_INSTALL   release (default): the archive, its checksum checked; go: go install
#   PROVISION_RELEASES  where the archives are (default: this repository's GitHub releases)
#   PROVISION_BIN       folder to install into (default: $HOME/.provision/bin)
#   PROVISION_DIR       the specs (default: specs): one folder, or several, one
#                       a line or separated by spaces, and glob patterns
#                       (teams/*/specs); each folder is one project, with its
#                       own comment, saved plan, snapshot and lock
#   PROVISION_ALLOWED_SERVERS  the servers a pull request's plan may send credentials
#                       to (default: those of the default branch's snapshot)
#   PROVISION_PLAN      the saved plan (default: provision.plan)
#   PROVISION_SNAPSHOT  the snapshot file, written by snapshot, read by plan for a fork
#   PROVISION_SNAPSHOT_ARTIFACT  the name it is published under (default: provision-snapshot)
#   PROVISION_LOCK_TIMEOUT  how long an apply waits for the project's lock held by
#                       another run (default 5m)
#   PROVISION_ON_PUSH   a push to the default branch that merged no pull request:
#                       check (default: fail when it plans any change) or apply
#   GITHUB_TOKEN        GitHub only: a token that may comment on pull requests
#                       and read the workflow's artifacts
#   PROVISION_COMMENTER GitHub only: the login GITHUB_TOKEN comments as
#                       (default github-actions[bot], the workflow's token)
#   PROVISION_DRIFT_LABEL  the label of the drift issues (default provision-drift)
#   PROVISION_POLICIES  the folders of the policies every plan is held to (provision
#                       reads it): a plan that fails a mandatory one fails the job,
#                       its comment saying which, and apply refuses it
#   PROVISION_POLICY_OWNERS  who may let a mandatory_overridable policy's failure
#                       through, once, for one plan: GitHub teams (org/team, the
#                       token reading their members) or GitLab usernames,
#                       separated by spaces; their comment "/provision override
#                       <digest> <why>" on the pull request does
#   PROVISION_APPLY_DRIFT  a run of apply on the default branch started by hand:
#                       the digest of the drift an issue shows, applied only
#                       while main still plans exactly those changes
#   GITLAB_TOKEN        GitLab only: a token that may read the API and write notes
# and the variables each CI system sets (GITHUB_*, CI_*).
set -eu

# The job's scratch folder: the comments read once for all projects, and
# each project's pull requests pending.
listed=$(mktemp -d)
trap 'rm -rf "$listed"' EXIT

module=github.com/provision-dev/provision
artifact=${PROVISION_SNAPSHOT_ARTIFACT:-provision-snapshot}
# -policy-override flags of an owner's override, for the project at hand.
override_flags=
lock_timeout=${PROVISION_LOCK_TIMEOUT:-5m}

# projects lists the folders of PROVISION_DIR, each one project: one
# folder, or several (one a line or separated by spaces) and glob
# patterns (teams/*/specs), each once, sorted.
projects() {
	for d in ${PROVISION_DIR:-specs}; do
		d=${d#./}
		printf '%s\n' "${d%/}"
	done | sort -u
}
count=$(projects | wc -l)

# project DIR makes DIR the project the commands below work on: its
# specs, its saved plan and snapshot (named after the folder when there
# are several: teams-a-specs.provision.plan), and the marker that finds
# its comment among a pull request's.
project() {
	dir=$1
	plan=${PROVISION_PLAN:-provision.plan}
	snapshot=${PROVISION_SNAPSHOT:-provision-snapshot.json}
	if [ "$count" -gt 1 ]; then
		slug=$(printf '%s' "$dir" | tr '/' '-')
		plan=$slug.$plan
		snapshot=$slug.$snapshot
	fi
	marker="<!-- provision-plan: $dir -->"
}
project "$(projects | head -n 1)"

# snapshot_of DIR is the name of project DIR's snapshot.
snapshot_of() { (project "$1" && printf '%s\n' "$snapshot"); }

# each COMMAND runs COMMAND for every project, each in a shell of its own
# (one that fails leaves the others to run, under their own locks), and
# fails naming the projects that failed.
each() {
	failed=
	for d in $(projects); do
		if [ "$count" -gt 1 ]; then say "project $d"; fi
		# Not in an || list, where sh would ignore errexit inside it.
		set +e
		(
			set -e
			project "$d"
			"$1"
		)
		code=$?
		set -e
		[ "$code" = 0 ] || failed="$failed $d"
	done
	[ -z "$failed" ] || die "$1 failed for:$failed (see above); the other projects went on"
}

# distinct refuses two folders that declare one project: their locks and
# ownership marks would be the same.
distinct() {
	[ "$count" -gt 1 ] || return 0
	seen=$(mktemp)
	for d in $(projects); do
		p=$(provision validate -json "$d" | jq -r '.project // empty') || true
		if [ -n "$p" ]; then
			other=$(awk -v p="$p" '$1 == p { print $2 }' "$seen")
			[ -z "$other" ] || die "$other and $d both declare project \"$p\": their locks and ownership marks would collide, so nothing is planned. Give each folder its own project"
			printf '%s %s\n' "$p" "$d" >>"$seen"
		fi
	done
	rm -f "$seen"
}

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

# call METHOD URL [curl args...]: one API call, the answer's body on
# stdout. An answer of 400 or more is said on stderr, status and body, and
# the call fails: nothing the API refused is ever taken for done.
call() {
	_method=$1 _url=$2
	shift 2
	_answer=$(mktemp)
	_status=$(curl -sS -X "$_method" -o "$_answer" -w '%{http_code}' "$@" "$_url") || {
		rm -f "$_answer"
		return 1
	}
	if [ "$_status" -ge 400 ]; then
		say "$_method ${_url%%\?*}: HTTP $_status: $(head -c 2000 "$_answer")"
		rm -f "$_answer"
		return 1
	fi
	cat "$_answer"
	rm -f "$_answer"
}

# github METHOD PATH [curl args...]: a call to the repository's part of
# GitHub's API.
github() {
	_method=$1 _path=$2
	shift 2
	[ -n "${GITHUB_TOKEN:-}" ] || die "GITHUB_TOKEN is not set: the action passes its github-token input; a token that may comment on pull requests and read the workflow's artifacts"
	call "$_method" "${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY$_path" \
		-H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json" "$@"
}

# gitlab METHOD PATH [curl args...]: a call to the project's part of
# GitLab's API.
gitlab() {
	_method=$1 _path=$2
	shift 2
	[ -n "${GITLAB_TOKEN:-}" ] || die "GITLAB_TOKEN is not set: the template needs a token that may read the API and write merge request notes"
	call "$_method" "$CI_API_V4_URL/projects/$CI_PROJECT_ID$_path" -H "PRIVATE-TOKEN: $GITLAB_TOKEN" "$@"
}

# api METHOD PATH [curl args...]: a call to this CI system's API.
api() {
	case $(ci) in
	github) github "$@" ;;
	gitlab) gitlab "$@" ;;
	esac
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
		curl -fsSL -o "$tmp/SHA256SUMS" "$base/SHA256SUMS" ||
			die "no release $version at $base (its SHA256SUMS cannot be downloaded, above): check PROVISION_VERSION against the release page, or, with a mirror (PROVISION_RELEASES), that it holds $version"
		curl -fsSL -o "$tmp/$name" "$base/$name" ||
			die "the release $version at $base has no $name (above): that release has no archive for $os/$arch"
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

# github_artifact_dir NAME FIELD VALUE DIR: unzips into DIR the newest
# unexpired artifact NAME of a workflow run whose FIELD (head_branch,
# head_sha) is VALUE; fails, saying so, when there is none.
github_artifact_dir() {
	got=$(github GET "/actions/artifacts?name=$1&per_page=100") || return 1
	id=$(printf '%s\n' "$got" | jq -r --arg f "$2" --arg v "$3" '[.artifacts[] | select((.expired | not) and .workflow_run[$f] == $v)] | sort_by(.created_at) | last | .id // empty') || return 1
	[ -n "$id" ] || { say "no artifact $1 of a run with $2 $3"; return 1; }
	github GET "/actions/artifacts/$id/zip" -L >"$4/artifact.zip" || return 1
	unzip -q -o "$4/artifact.zip" -d "$4" || { say "the artifact $1 ($id) cannot be unzipped"; return 1; }
	rm -f "$4/artifact.zip"
}

# github_artifact NAME FIELD VALUE FILE: downloads FILE out of that
# artifact; fails, saying so, when there is none or it lacks FILE.
github_artifact() {
	tmp=$(mktemp -d)
	if github_artifact_dir "$1" "$2" "$3" "$tmp" && [ -f "$tmp/$(basename "$4")" ]; then
		mv "$tmp/$(basename "$4")" "$4"
		rm -rf "$tmp"
		return 0
	fi
	if [ -n "$(ls -A "$tmp")" ]; then say "the artifact $1 holds no $(basename "$4")"; fi
	rm -rf "$tmp"
	return 1
}

# default_snapshot downloads the snapshot the default branch's pipeline
# published last into $snapshot; fails, saying so, when none has.
default_snapshot() {
	case $(ci) in
	github)
		branch=$(jq -r '.repository.default_branch' "$GITHUB_EVENT_PATH")
		github_artifact "$artifact" head_branch "$branch" "$snapshot" ||
			{ say "no run on $branch has published $artifact: run the workflow there first"; return 1; }
		;;
	gitlab)
		call GET "$CI_API_V4_URL/projects/$CI_PROJECT_ID/jobs/artifacts/$CI_DEFAULT_BRANCH/raw/$snapshot?job=provision-snapshot" \
			-H "JOB-TOKEN: $CI_JOB_TOKEN" >"$snapshot" ||
			{ say "no provision-snapshot job on $CI_DEFAULT_BRANCH has published $snapshot: run the pipeline there first"; return 1; }
		;;
	esac
}

fetch_snapshot() { default_snapshot || exit 1; }

# allow_default sets PROVISION_ALLOWED_SERVERS, when the CI config does
# not, to the servers the default branch's specs declare (their
# snapshot's): a pull request that adds or moves a server is planned
# without the credentials for it. It sets allowed_note to what the
# comment says of it.
allow_default() {
	allowed_note=
	if [ -n "${PROVISION_ALLOWED_SERVERS+set}" ]; then return; fi
	dir=$(mktemp -d)
	default_snapshots "$dir" || true
	found=$(mktemp)
	taken=
	for f in "$dir"/*"${PROVISION_SNAPSHOT:-provision-snapshot.json}"; do
		[ -f "$f" ] || continue
		jq -r '.backends[].address, ((.record.agents // {}) | .[])' "$f" >>"$found" || die "the default branch's snapshot $(basename "$f") is not a provision snapshot"
		taken=$(jq -r '.taken_at' "$f")
	done
	rm -rf "$dir"
	if [ ! -s "$found" ]; then
		rm -f "$found"
		allowed_note="Credentials went to every server the specs name: no snapshot of the default branch says which servers its specs declare (add the snapshot job, or set PROVISION_ALLOWED_SERVERS in the CI config)."
		return
	fi
	PROVISION_ALLOWED_SERVERS=$(sort -u "$found" | paste -sd, -)
	rm -f "$found"
	export PROVISION_ALLOWED_SERVERS
	allowed_note=$(printf 'Credentials went only to the servers the default branch'"'"'s specs declare (its snapshots, the last taken %s): `%s`. A server this pull request adds or moves is planned without them; widen `PROVISION_ALLOWED_SERVERS` in the CI config to allow it.' \
		"$taken" "$PROVISION_ALLOWED_SERVERS")
}

# default_snapshots DIR: every snapshot the default branch's pipeline
# published last, into DIR: each project's and the one-project name, so
# that a pull request that adds a folder (or makes one project several)
# does not find no snapshot of its own and so allow every server. The
# artifact is downloaded once (GitHub); GitLab serves each file alone.
default_snapshots() {
	case $(ci) in
	github)
		github_artifact_dir "$artifact" head_branch "$(jq -r '.repository.default_branch' "$GITHUB_EVENT_PATH")" "$1" 2>/dev/null
		;;
	gitlab)
		for name in $(for p in $(projects); do snapshot_of "$p"; done) "${PROVISION_SNAPSHOT:-provision-snapshot.json}"; do
			call GET "$CI_API_V4_URL/projects/$CI_PROJECT_ID/jobs/artifacts/$CI_DEFAULT_BRANCH/raw/$name?job=provision-snapshot" \
				-H "JOB-TOKEN: $CI_JOB_TOKEN" >"$1/$name" 2>/dev/null || rm -f "$1/$name"
		done
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

# comments_path N: where the comments (GitHub) or notes (GitLab) of pull
# request N are.
comments_path() {
	case $(ci) in
	github) echo "/issues/$1/comments" ;;
	gitlab) echo "/merge_requests/$1/notes" ;;
	esac
}

# edit: the method that edits a comment.
edit() {
	case $(ci) in
	github) echo PATCH ;;
	gitlab) echo PUT ;;
	esac
}

# commit: the commit the pipeline runs for.
commit() {
	case $(ci) in
	github) echo "${GITHUB_SHA:-}" ;;
	gitlab) echo "${CI_COMMIT_SHA:-}" ;;
	esac
}

# comment_path N ID: where one of them is.
comment_path() {
	case $(ci) in
	github) echo "/issues/comments/$2" ;;
	gitlab) echo "/merge_requests/$1/notes/$2" ;;
	esac
}

# author: who the step's comments are by, the only comments it reads or
# edits, so that nobody else's comment passes for its plan: on GitHub,
# $PROVISION_COMMENTER (default github-actions[bot], the author of what
# the workflow's token posts); on GitLab, the token's user.
author() {
	case $(ci) in
	github) echo "${PROVISION_COMMENTER:-github-actions[bot]}" ;;
	gitlab)
		got=$(call GET "$CI_API_V4_URL/user" -H "PRIVATE-TOKEN: $GITLAB_TOKEN") || die "reading the user of GITLAB_TOKEN was refused by the API (its answer is above)"
		printf '%s\n' "$got" | jq -r .username
		;;
	esac
}

# provision_comments N: the step's comments on pull request N for $dir,
# oldest first, as JSON lines {id, body}. Every page is read once a job
# (into $listed, for all the projects of the job): a project reads its own
# comments before it writes them and never after, and the others' are not
# its, so the one reading serves them all.
provision_comments() {
	if [ ! -f "$listed/$1" ]; then
		by=$(author) || exit 1
		pages "$(comments_path "$1")?sort=asc&" "reading the comments of #$1" \
			'.[] | select((.user.login // .author.username) == $by) | select(.body | startswith("<!-- provision-plan: ")) | {id, body}' --arg by "$by" >"$listed/$1.part" || exit 1
		mv "$listed/$1.part" "$listed/$1"
	fi
	jq -c --arg m "<!-- provision-plan: $dir" 'select((.body | startswith($m + " -->")) or (.body | startswith($m + " (part ")))' "$listed/$1"
}

# pages PATH WHAT FILTER [JQ ARGS...]: every page of the list at PATH (a
# query ending in ? or &, to which per_page and page are added), each
# element the jq FILTER (given ARGS) keeps, a JSON line each. A call the
# API refuses, or an answer that is no list, fails the job, saying WHAT
# was refused.
pages() {
	# Names of their own: sh's variables are global, and api's helpers
	# set _path.
	pages_list=$1 pages_what=$2 pages_filter=$3
	shift 3
	pages_n=1
	while :; do
		api GET "${pages_list}per_page=100&page=$pages_n" >"$listed/page" || die "$pages_what was refused by the API (its answer is above)"
		jq -e 'type == "array"' "$listed/page" >/dev/null 2>&1 || die "$pages_what: the API answered something else than a list: $(head -c 500 "$listed/page")"
		jq -c "$@" "$pages_filter" "$listed/page"
		[ "$(jq length "$listed/page")" -eq 100 ] || break
		pages_n=$((pages_n + 1))
	done
}

# write_comment METHOD PATH FILE WHAT: sends FILE as a comment's body; a
# call the API refuses fails the job, saying what was refused.
write_comment() {
	jq -Rs '{body: .}' <"$3" | api "$1" "$2" -H 'Content-Type: application/json' --data-binary @- >/dev/null ||
		die "$4 was refused by the API (its answer is above): the job fails, so that nobody merges on a plan the pull request does not show"
}

# comment FILE...: the pull request's provision comments for $dir, one
# per FILE (the parts of a long plan, each under the limit), each made or
# updated in place; comments of parts no longer needed are deleted. Any
# call the API refuses fails the job.
comment() {
	n=$(change)
	[ -n "$n" ] || die "no pull request or merge request to comment on"
	found=$(provision_comments "$n") || exit 1
	ids=$(printf '%s\n' "$found" | jq -r .id | sort -n)
	i=0
	body=$(mktemp)
	max=$(limit)
	for part in "$@"; do
		i=$((i + 1))
		{ mark "$i"; cat "$part"; } >"$body"
		size=$(wc -m <"$body")
		[ "$size" -le "$max" ] || die "part $i of the plan comment is $size characters, over the limit of $max: not posted"
		id=$(echo "$ids" | sed -n "${i}p")
		if [ -n "$id" ]; then
			write_comment "$(edit)" "$(comment_path "$n" "$id")" "$body" "updating the plan comment $id on #$n"
			say "updated the plan comment $id on #$n (part $i of $#)"
		else
			write_comment POST "$(comments_path "$n")" "$body" "commenting on #$n"
			say "commented the plan on #$n (part $i of $#)"
		fi
	done
	for id in $(echo "$ids" | sed -n "$((i + 1)),\$p"); do
		api DELETE "$(comment_path "$n" "$id")" >/dev/null ||
			die "deleting the old plan comment $id on #$n was refused by the API (its answer is above)"
		say "deleted the plan comment $id of a part no longer needed"
	done
	rm -f "$body"
}

# plan_to FILE: plans $dir (from the snapshot for a fork) into FILE, its
# output in plan.out; sets planned to plan's exit code, and fork_note to
# what the comment says of a fork's plan.
plan_to() {
	rm -f "$1" # a plan file after a failed plan is one that failed only policies
	set -- plan -detailed-exitcode -no-color "-out=$1" $override_flags
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

# changes PLANFILE: what the plan does, for comparing two plans: each
# change that sends something, its address, action and requests.
changes() {
	provision show -json "$1" | jq -cS '[.changes[] | select(.action != "no-op") | {address, action, requests}]'
}

# digest PLANFILE: the digest of changes PLANFILE, which each plan comment
# carries so that an apply knows what the pull request shows.
digest() { changes "$1" | sum; }

# sum: the SHA-256 of its input, as a digest says it.
sum() { sha256sum | cut -d' ' -f1; }

# shown N: the digest of the changes the comment of pull request N shows
# now; empty when it shows none (no comment, or a failed plan).
shown() {
	found=$(provision_comments "$1") || exit 1
	printf '%s\n' "$found" | jq -r --arg m "$marker" 'select(.body | startswith($m)) | .body | capture("<!-- provision-changes: (?<d>[0-9a-f]+) -->").d' | head -n 1
}

# comment_plan HEADER FILE: shows the plan plan_to made into FILE (or its
# failure, from plan.out) under HEADER: as the pull request's comment, in
# parts when it is long; for a fork on GitHub, whose token may not write,
# as the job's summary. It is never called in an || list, so that a
# failed comment fails the job.
comment_plan() {
	text=$(mktemp)
	parts=$(mktemp -d)
	made=false
	if [ "$planned" = 0 ] || [ "$planned" = 2 ] || [ -f "$2" ]; then
		made=true
		printf '<!-- provision-changes: %s -->\n' "$(digest "$2")" >"$text"
	fi
	printf '%s\n\n' "$1" >>"$text"
	if [ -n "$fork_note" ]; then printf '%s\n\n' "$fork_note" >>"$text"; fi
	if [ -n "${allowed_note:-}" ]; then printf '%s\n\n' "$allowed_note" >>"$text"; fi
	if [ -n "${policies_note:-}" ]; then printf '%s\n\n' "$policies_note" >>"$text"; fi
	if [ "$made" = false ]; then
		printf '**The plan failed.**\n\n```\n%s\n```\n' "$(tail -c 60000 plan.out)" >>"$text"
		set -- "$text"
	else
		provision show -format=markdown "-parts-dir=$parts" "$2"
		cat "$parts/part-1.md" >>"$text"
		mv "$text" "$parts/part-1.md"
		set -- $(ls "$parts"/part-*.md | sort -t- -k2 -n)
	fi
	if [ -n "$fork_note" ] && [ "$(ci)" = github ]; then
		[ -n "${GITHUB_STEP_SUMMARY:-}" ] || die "GITHUB_STEP_SUMMARY is not set: a fork's plan is shown as the job's summary"
		cat "$@" >>"$GITHUB_STEP_SUMMARY"
		say "a pull request from a fork gets a token that may not comment: the plan is the job's summary, on the run's page"
	else
		comment "$@"
	fi
	rm -rf "$text" "$parts" plan.out
	if [ -n "${codes:-}" ]; then echo "$planned" >>"$codes"; else output exitcode "$planned"; fi
}

sha() {
	case $(ci) in
	github) jq -r '.pull_request.head.sha // empty' "$GITHUB_EVENT_PATH" ;;
	gitlab) echo "${CI_COMMIT_SHA:-}" ;;
	esac
}

plan_one() {
	override_flags= policies_note=
	plan_to "$plan"
	if [ "$planned" = 1 ] && [ -f "$plan" ]; then
		overriding "$(change)" "$plan"
		if [ -n "$override_flags" ]; then
			say "$(printf '%s' "$by" | cut -f1) let $(echo $names) through for these changes ($(printf '%s' "$by" | cut -f2-)): planning again with$override_flags"
			plan_to "$plan"
		fi
	fi
	comment_plan "provision plan of \`$dir\` at $(sha)" "$plan"
	[ "$planned" = 0 ] || [ "$planned" = 2 ] || exit 1
	output plan "$plan"
}

# failing PLANFILE LEVEL: the policies of that enforcement_level PLANFILE
# fails (overridden or not), one a line.
failing() {
	provision show -json "$1" | jq -r --arg l "$2" '[.policy_results[]? | select(.result == "fail" and .enforcement_level == $l) | .policy] | unique | .[]'
}

# overriding N PLANFILE: when PLANFILE fails mandatory_overridable
# policies only, looks on pull request N for an owner's override of its
# changes (override_of), and sets override_flags to let them through, and
# policies_note to what the comment says of it: who let which through,
# and why, or how an owner may.
overriding() {
	[ -z "$(failing "$2" mandatory)" ] || return 0
	names=$(failing "$2" mandatory_overridable)
	[ -n "$names" ] || return 0
	d=$(digest "$2")
	by=$(override_of "$1" "$d")
	if [ -z "$by" ]; then
		who="No one (PROVISION_POLICY_OWNERS names no owner)"
		if [ -n "${PROVISION_POLICY_OWNERS:-}" ]; then who="An owner ($PROVISION_POLICY_OWNERS)"; fi
		policies_note=$(printf '**Mandatory policies fail** (below). %s may let these failures (%s) through for exactly these changes, once: a comment `/provision override %s <why>` on this pull request, then a re-run of this job.' \
			"$who" "$(echo $names)" "$d")
		return 0
	fi
	override_flags=$(for p in $names; do printf ' -policy-override=%s' "$p"; done)
	policies_note=$(printf '**Policies overridden**: %s let %s through for these changes (digest `%s`): %s' \
		"@$(printf '%s' "$by" | cut -f1)" "$(echo $names)" "$d" "$(printf '%s' "$by" | cut -f2-)")
}

# override_of N DIGEST: the first comment on pull request N by an owner
# (PROVISION_POLICY_OWNERS) that reads "/provision override DIGEST
# <why>", as "login<TAB>why"; empty when there is none. An override is
# bound to the digest of the changes: another plan needs another.
override_of() {
	[ -n "${PROVISION_POLICY_OWNERS:-}" ] || return 0
	pages "$(comments_path "$1")?sort=asc&" "reading the comments of #$1 for an owner's override" \
		'.[] | (.user.login // .author.username) as $by | .body | capture("^/provision override (?<d>[0-9a-f]{64})[ \t]+(?<why>[^\r\n]+)") | select(.d == $d) | [$by, .why]' \
		--arg d "$2" >"$listed/overrides" || exit 1
	jq -r '@tsv' "$listed/overrides" | while IFS="$(printf '\t')" read -r login why; do
		if owner "$login"; then
			printf '%s\t%s\n' "$login" "$why"
			break
		fi
	done
}

# owner LOGIN: whether LOGIN is an owner: a member of a team
# PROVISION_POLICY_OWNERS names (GitHub; the token reads the team's
# members), or one of its usernames (GitLab).
owner() {
	for o in $PROVISION_POLICY_OWNERS; do
		case $(ci) in
		github)
			got=$(call GET "${GITHUB_API_URL:-https://api.github.com}/orgs/${o%%/*}/teams/${o#*/}/memberships/$1" \
				-H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json" 2>/dev/null) &&
				[ "$(printf '%s' "$got" | jq -r .state)" = active ] && return 0
			;;
		gitlab) [ "$o" = "$1" ] && return 0 ;;
		esac
	done
	return 1
}

plan() {
	distinct
	if ! fork; then allow_default; fi
	export allowed_note
	codes=$(mktemp)
	export codes
	each plan_one
	# The action's exitcode: 2 when any project plans changes.
	if grep -qx 2 "$codes"; then output exitcode 2; else output exitcode 0; fi
	rm -f "$codes"
}

# merged_change is the number of the pull request the pushed commit
# merged, empty when none did.
merged_change() {
	case $(ci) in
	github) got=$(github GET "/commits/$(commit)/pulls") && printf '%s\n' "$got" | jq -r '.[0].number // empty' ;;
	gitlab) got=$(gitlab GET "/repository/commits/$(commit)/merge_requests") && printf '%s\n' "$got" | jq -r '.[0].iid // empty' ;;
	esac || die "asking which pull request $(commit) merged was refused by the API (its answer is above)"
}

# fetch_plan N FILE: downloads the saved plan of $dir that pull request
# N's last plan job made into FILE.
fetch_plan() {
	case $(ci) in
	github)
		got=$(github GET "/pulls/$1") || return 1
		head=$(printf '%s\n' "$got" | jq -r .head.sha)
		got=$(mktemp -d)
		(cd "$got" && github_artifact "provision-plan-$1" head_sha "$head" "$plan") || { rm -rf "$got"; return 1; }
		mv "$got/$plan" "$2"
		rm -rf "$got"
		;;
	gitlab)
		got=$(gitlab GET "/merge_requests/$1") || return 1
		pipeline=$(printf '%s\n' "$got" | jq -r '.head_pipeline.id // empty')
		[ -n "$pipeline" ] || { say "!$1 has no pipeline"; return 1; }
		got=$(gitlab GET "/pipelines/$pipeline/jobs?scope=success") || return 1
		job=$(printf '%s\n' "$got" | jq -r '[.[] | select(.name == "provision-plan")][0].id // empty')
		[ -n "$job" ] || { say "the pipeline $pipeline of !$1 has no provision-plan job that succeeded"; return 1; }
		gitlab GET "/jobs/$job/artifacts/$plan" >"$2"
		;;
	esac
}

# run_url: this job's page.
run_url() {
	case $(ci) in
	github) echo "${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/${GITHUB_RUN_ID:-}" ;;
	gitlab) echo "${CI_JOB_URL:-}" ;;
	esac
}

# applied N WHAT [once]: says on the first comment of pull request N what
# the merge's job finally applied, in a line above its plan (replacing the
# line of an earlier run); with once, only when no job has said so yet
# (a later merge's job, whose apply holds #N's changes too).
applied() {
	found=$(provision_comments "$1") || exit 1
	first=$(printf '%s\n' "$found" | jq -c --arg m "$marker" 'select(.body | startswith($m))' | head -n 1)
	if [ -z "$first" ]; then
		say "applied; #$1 has no plan comment to say so on"
		return
	fi
	if [ -n "${3:-}" ] && printf '%s\n' "$first" | jq -e '.body | contains("<!-- provision-status -->")' >/dev/null; then
		return
	fi
	body=$(mktemp)
	status="<!-- provision-status --> **Applied** after the merge at $(commit): $2 ([the job]($(run_url)))."
	printf '%s\n' "$first" | jq -r --arg s "$status" '.body | split("\n") | [.[0], $s] + (.[1:] | map(select(startswith("<!-- provision-status -->") | not))) | join("\n")' >"$body"
	write_comment "$(edit)" "$(comment_path "$1" "$(printf '%s\n' "$first" | jq -r .id)")" "$body" "saying on #$1 that its plan was applied"
	rm -f "$body"
	say "said on #$1 that its plan was applied"
}

# apply_merge_commit N: the reviewed plan of #N was refused (the live
# systems or the specs moved since it was made, or it was made from a
# snapshot): the merge commit is planned again, and applied only when it
# makes exactly the changes #N's comment shows (the plan its plan job
# saved, or the one an earlier run of this job put there), or exactly the
# reviewed changes of every pull request merged since the history's last
# apply (merges in a row whose jobs did not run, or ran out of order);
# otherwise the new plan goes on #N, where a re-run of this job finds it,
# and the job fails.
apply_merge_commit() {
	say "the plan #$1 reviewed cannot be applied as it is (see above); planning the merge commit again"
	want=$(shown "$1")
	[ -n "$want" ] || want=$(digest "$plan")
	plan_to merge.plan
	if [ "$planned" = 0 ] || [ "$planned" = 2 ]; then
		merged=$(changes merge.plan)
		if [ "$(printf '%s\n' "$merged" | sum)" = "$want" ]; then
			apply_recorded merge.plan "the merge commit's plan, which makes exactly the changes #$1 shows" "the merge commit's plan, which makes exactly the changes shown here" ||
				die "the merge commit's plan, which makes the changes #$1 shows, failed to apply (see above)"
			return
		fi
		if [ "$(wc -l <"$pending")" -gt 1 ] && together=$(union); then
			if [ "$(printf '%s\n' "$merged" | jq -cS 'sort_by(.address)')" = "$together" ]; then
				what="the merge commit's plan, which makes exactly the reviewed changes of $(numbers)"
				apply_recorded merge.plan "$what" "$what" || die "$what failed to apply (see above)"
				return
			fi
			say "the merge commit plans other changes than the reviewed changes of $(numbers) together"
		fi
	fi
	PROVISION_CHANGE=$1 comment_plan "provision: the merge commit plans other changes than this pull request showed (or none could be planned): they are shown here, and nothing was applied. Review them; a re-run of the merge's job applies them while the merge commit still plans exactly these, or apply from the default branch (a push there)." merge.plan
	exit 1
}

# numbers: the pull requests pending, as "#2, #3 and #4".
numbers() {
	awk '{ n[NR] = "#" $2 } END { for (i = 1; i <= NR; i++) printf "%s%s", n[i], (i == NR ? "" : (i == NR - 1 ? " and " : ", ")) }' "$pending"
}

# union: the reviewed changes of every pull request pending, together,
# sorted by address, on stdout; fails, saying so, when one's reviewed plan
# is gone or two change one object (then no order of theirs was reviewed).
union() {
	lines=$listed/union.lines
	: >"$lines"
	while read -r sha p; do
		reviewed=$plan # #n's, downloaded already
		if [ "$p" != "$n" ]; then
			reviewed=$listed/reviewed.plan
			fetch_plan "$p" "$reviewed" || { say "the reviewed plan of #$p (merged at $sha) was not found: the merge commit's plan cannot be held against it"; return 1; }
		fi
		changes "$reviewed" | jq -c --arg p "$p" '.[] | . + {pr: $p}' >>"$lines"
	done <"$pending"
	both=$(jq -rs 'group_by(.address) | map(select(length > 1)) | .[0] // empty | "\(.[0].address) is changed by " + (map("#" + .pr) | join(" and "))' "$lines")
	if [ -n "$both" ]; then
		say "$both, each reviewed without the other: nothing is applied"
		return 1
	fi
	jq -cSs 'map(del(.pr)) | sort_by(.address)' "$lines"
}

# apply_recorded PLANFILE LOG COMMENT: applies PLANFILE, adding to the
# project's history (in Consul, under its lock, once the apply completes)
# an entry for every pull request pending, and says so in the log (LOG)
# and on each of them (COMMENT on #n); fails, its output in apply.out,
# when the apply fails.
apply_recorded() {
	record=$(mktemp)
	while read -r sha p; do
		d=
		if [ "$p" = "$n" ]; then d=$(digest "$1"); fi
		jq -n --arg c "$sha" --arg p "$p" --arg d "$d" --arg j "$(run_url)" '{commit: $c, change: $p, digest: $d, job: $j}'
	done <"$pending" | jq -s . >"$record"
	provision apply -no-color "-lock-timeout=$lock_timeout" $(recording "$record") $override_flags "$1" >apply.out 2>&1 || {
		cat apply.out
		rm -f "$record"
		return 1
	}
	cat apply.out
	rm -f "$record" apply.out
	say "applied $2"
	while read -r sha p; do
		if [ "$p" = "$n" ]; then applied "$p" "$3"; else applied "$p" "the plan of #$n's merge at $(commit), which holds this pull request's changes" once; fi
	done <"$pending"
}

# recording FILE: apply's flag that records FILE's entries in the
# project's history; nothing for a project that keeps none (no Consul
# agent holds its lock). mktemp's names hold no space.
recording() {
	if [ "$kept" = true ]; then printf '%s\n' "-record=$1"; fi
}

# between BASE HEAD: the commits after BASE up to HEAD on the default
# branch, oldest first, one a line; none when HEAD is BASE or before it.
# Fails when the API cannot compare them (the answer is said).
between() {
	case $(ci) in
	github) got=$(github GET "/compare/$1...$2?per_page=250") && printf '%s\n' "$got" | jq -r 'select(.status == "ahead" or .status == "diverged") | .commits[].sha' ;;
	gitlab) got=$(gitlab GET "/repository/compare?from=$1&to=$2") && printf '%s\n' "$got" | jq -r '.commits[].id' ;;
	esac
}

# merged_at SHA: the pull request SHA merged (its merge, squash or last
# rebased commit), empty when it merged none.
merged_at() {
	case $(ci) in
	github) got=$(github GET "/commits/$1/pulls") && printf '%s\n' "$got" | jq -r --arg s "$1" '[.[] | select(.merge_commit_sha == $s)][0].number // empty' ;;
	gitlab) got=$(gitlab GET "/repository/commits/$1/merge_requests") && printf '%s\n' "$got" | jq -r --arg s "$1" '[.[] | select(.state == "merged" and (.merge_commit_sha == $s or .squash_commit_sha == $s or .sha == $s))][0].iid // empty' ;;
	esac || die "asking which pull request $1 merged was refused by the API (its answer is above)"
}

# covered: whether the project's history says an apply already brought
# live to this commit or past it (an apply, of a reviewed plan or of a
# merge commit's, makes live what the specs at its commit declare): #n
# was applied, or the commit is not newer than the last applied. Then
# nothing is sent: never an older commit's plan over a newer main. It
# writes to pending the pull requests merged since the last applied commit
# (sha and number, a line each; #n alone without a history).
covered() {
	pending=$(mktemp "$listed/pending.XXXXXX")
	last=
	if hist=$(provision history -json "$dir"); then
		kept=$(printf '%s\n' "$hist" | jq -r .kept)
		last=$(printf '%s\n' "$hist" | jq -r '.applied[-1].commit // empty')
	else
		printf '%s\n' "$hist" | jq -r '.diagnostics[]? | "\(.summary): \(.detail)"' >&2 || true
		kept=false
		say "the history of project $dir cannot be read (above): this merge is applied as if it had none, and is not recorded"
	fi
	if [ -z "$last" ]; then
		if [ -n "$n" ]; then printf '%s %s\n' "$(commit)" "$n" >"$pending"; fi
		return 1
	fi
	job=$(printf '%s\n' "$hist" | jq -r '.applied[-1].job // "a run"')
	if [ -n "$n" ]; then
		by=$(printf '%s\n' "$hist" | jq -r --arg n "$n" '[.applied[] | select(.change == $n)] | last // empty | "\(.commit) by \(.job)"')
		if [ -n "$by" ]; then
			say "#$n was applied already, at $by (provision-ci.sh history): nothing is sent"
			return 0
		fi
	fi
	if ! later=$(between "$last" "$(commit)"); then
		say "$last, the history's last apply, cannot be compared with $(commit) (above; a commit a force push took off the default branch?): only #$n's reviewed changes are accepted, as without a history"
		if [ -n "$n" ]; then printf '%s %s\n' "$(commit)" "$n" >"$pending"; fi
		return 1
	fi
	if [ "$last" = "$(commit)" ] || [ -z "$later" ]; then
		say "$(commit) is not newer than $last, which $job applied (provision-ci.sh history): that apply made live what main declares there, and an older commit's plan is never applied over it; nothing is sent"
		return 0
	fi
	for sha in $later; do
		p=$(merged_at "$sha") || exit 1
		if [ -n "$p" ] && ! grep -q " $p\$" "$pending"; then printf '%s %s\n' "$sha" "$p" >>"$pending"; fi
	done
	if [ -n "$n" ] && ! grep -q " $n\$" "$pending"; then printf '%s %s\n' "$(commit)" "$n" >>"$pending"; fi
	if [ "$(wc -l <"$pending")" -gt 1 ]; then say "merged since $last, the history's last apply: $(numbers)"; fi
	return 1
}

# push_apply: a push that merged no pull request. With
# PROVISION_ON_PUSH=apply it is planned and applied; with check (the
# default) the job fails when the default branch plans any change, so that
# live and main never part without a red job.
push_apply() {
	sha=$(commit)
	case ${PROVISION_ON_PUSH:-check} in
	apply)
		say "the push $sha merged no pull request; PROVISION_ON_PUSH=apply: planning and applying the default branch"
		record=$(mktemp)
		jq -n --arg c "$sha" --arg j "$(run_url)" '{commit: $c, job: $j}' >"$record"
		provision apply -auto-approve -no-color "-lock-timeout=$lock_timeout" $(recording "$record") "$dir" || die "applying the default branch at $sha failed (see above)"
		rm -f "$record"
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

# on_default_branch says whether the pipeline runs on the default branch.
on_default_branch() {
	case $(ci) in
	github) [ "${GITHUB_REF:-}" = "refs/heads/$(jq -r '.repository.default_branch // empty' "$GITHUB_EVENT_PATH")" ] ;;
	gitlab) [ -n "${CI_COMMIT_BRANCH:-}" ] && [ "$CI_COMMIT_BRANCH" = "${CI_DEFAULT_BRANCH:-}" ] ;;
	esac
}

apply() {
	if [ -n "${PROVISION_APPLY_DRIFT:-}" ]; then
		on_default_branch || die "PROVISION_APPLY_DRIFT applies the default branch's specs, and this run is not on it (${GITHUB_REF:-${CI_COMMIT_BRANCH:-no branch}}): nothing is applied. Run the pipeline on the default branch"
		matched=$(mktemp)
		export matched
		each apply_drift_one
		[ -s "$matched" ] || die "no project's default branch plans the drift $PROVISION_APPLY_DRIFT (above): nothing was applied. The drift issue shows the drift's digest now (the next drift run updates it)"
		rm -f "$matched"
		return
	fi
	n=$(merged_change)
	export n
	each apply_one
}

# apply_drift_one: a run of apply started by hand with
# PROVISION_APPLY_DRIFT, the digest of the drift an issue shows: $dir's
# default branch is planned again and applied only when it makes exactly
# those changes, and the apply is recorded in the project's history.
apply_drift_one() {
	plan_to drift.plan
	case $planned in
	0)
		say "$dir plans no change at $(commit): live matches the default branch, nothing is sent"
		return
		;;
	2) ;;
	*) die "planning $dir at $(commit) failed (above): nothing is applied" ;;
	esac
	d=$(digest drift.plan)
	if [ "$d" != "$PROVISION_APPLY_DRIFT" ]; then
		say "$dir plans other changes than the drift $PROVISION_APPLY_DRIFT (its digest is $d): nothing is applied to it"
		return
	fi
	echo "$dir" >>"$matched"
	kept=$(provision history -json "$dir" 2>/dev/null | jq -r '.kept // false') || kept=false
	record=$(mktemp)
	jq -n --arg c "$(commit)" --arg d "$d" --arg j "$(run_url)" '{commit: $c, digest: $d, job: $j}' >"$record"
	say "applying the drift $d of $dir, which the default branch at $(commit) still plans exactly; waiting up to $lock_timeout for the project's lock if another run holds it"
	provision apply -no-color "-lock-timeout=$lock_timeout" $(recording "$record") drift.plan || die "applying the drift of $dir failed (see above)"
	rm -f "$record" drift.plan
	say "applied the drift of $dir: the next drift run closes its issue"
}

apply_one() {
	if covered; then return; fi
	if [ -z "$n" ]; then
		push_apply
		return
	fi
	fetch_plan "$n" "$plan" || die "the reviewed plan of #$n was not found (its plan job did not succeed, or its artifact expired): nothing is applied; plan it again"
	override_flags=
	blocking=$(failing "$plan" mandatory)
	if [ -n "$blocking" ]; then
		die "the reviewed plan of #$n fails mandatory policies ($(echo $blocking)), which no one may override: nothing is applied. Change the specs (or the policies) in a pull request"
	fi
	if names=$(failing "$plan" mandatory_overridable) && [ -n "$names" ]; then
		by=$(override_of "$n" "$(digest "$plan")")
		[ -n "$by" ] || die "the reviewed plan of #$n fails mandatory_overridable policies ($(echo $names)), and no owner's override of its changes is on #$n now: nothing is applied"
		override_flags=$(for p in $names; do printf ' -policy-override=%s' "$p"; done)
		say "$(printf '%s' "$by" | cut -f1) let $(echo $names) through for these changes: $(printf '%s' "$by" | cut -f2-)"
	fi
	say "applying the plan #$n reviewed; waiting up to $lock_timeout for the project's lock if another run holds it"
	if apply_recorded "$plan" "the plan #$n reviewed" "the plan reviewed here"; then return; fi
	if grep -q "(-lock-timeout)" apply.out; then
		die "the project's lock was held by another run for all of $lock_timeout (see above): nothing was applied. Re-run this job once that run is done, or raise PROVISION_LOCK_TIMEOUT"
	fi
	apply_merge_commit "$n"
}

# The drift job: run on a schedule, it plans each project's specs at the
# default branch against live and keeps one issue per project that says
# so (opened, updated when the drift changes, closed when live matches
# main again), for the team to review as any other work. It holds no
# lock and writes nothing to the live systems.

label=${PROVISION_DRIFT_LABEL:-provision-drift}

# issue_limit is the longest issue body the CI system takes, in
# characters: GitHub's 65,536, GitLab's 1,048,576.
issue_limit() {
	case $(ci) in
	github) echo 65536 ;;
	gitlab) echo 1048576 ;;
	esac
}

# drift_issues: every issue of the step's user with the drift label,
# open or closed, newest first, as JSON lines {number, open, body}; every
# page is read once a job, for all its projects.
drift_issues() {
	if [ ! -f "$listed/issues" ]; then
		by=$(author) || exit 1
		encoded=$(jq -rn --arg l "$label" '$l | @uri')
		case $(ci) in
		github) q="labels=$encoded&state=all&sort=created&direction=desc" ;;
		gitlab) q="labels=$encoded&state=all&order_by=created_at&sort=desc" ;;
		esac
		pages "/issues?$q&" "searching the drift issues (label $label)" \
			'.[] | select((.user.login // .author.username) == $by) | select(.pull_request == null)
				| {number: (.number // .iid), open: (.state == "open" or .state == "opened"), body: (.body // .description // "")}' --arg by "$by" >"$listed/issues.part" || exit 1
		mv "$listed/issues.part" "$listed/issues"
	fi
	cat "$listed/issues"
}

# drift_issue: the drift issue of $dir, its open one, else its newest;
# empty when it has none.
drift_issue() {
	found=$(drift_issues) || exit 1
	printf '%s\n' "$found" | jq -cs --arg m "<!-- provision-drift: $dir -->" \
		'map(select(.body | startswith($m + "\n") or startswith($m + "\r\n"))) | (map(select(.open)) + map(select(.open | not)))[0] // empty'
}

# issue_path N: where issue N is; notes_path N: its comments (GitHub) or
# notes (GitLab).
issue_path() { echo "/issues/$1"; }
notes_path() {
	case $(ci) in
	github) echo "/issues/$1/comments" ;;
	gitlab) echo "/issues/$1/notes" ;;
	esac
}

# write_issue METHOD PATH FILE STATE WHAT: sends FILE as issue's body
# (with the title and label when it opens one), and STATE (open, closed,
# or empty to keep it); prints the issue's number. A call the API refuses
# fails the job, saying what was refused.
write_issue() {
	case $(ci) in
	github)
		jq -Rs --arg t "provision drift: $dir" --arg l "$label" --arg s "$4" --arg m "$1" \
			'{body: .} + (if $m == "POST" then {title: $t, labels: [$l]} else {} end) + (if $s != "" then {state: $s} else {} end)' <"$3"
		;;
	gitlab)
		jq -Rs --arg t "provision drift: $dir" --arg l "$label" --arg s "$4" --arg m "$1" \
			'{description: .} + (if $m == "POST" then {title: $t, labels: $l} else {} end) + (if $s == "open" then {state_event: "reopen"} elif $s == "closed" then {state_event: "close"} else {} end)' <"$3"
		;;
	esac | api "$1" "$2" -H 'Content-Type: application/json' --data-binary @- >"$listed/written" ||
		die "$5 was refused by the API (its answer is above): the job fails, so that drift is never left unsaid"
	number=$(jq -r '.number // .iid' "$listed/written")
	# GitHub drops the labels a token may not set, silently: an issue
	# without the label is one the next run does not find.
	jq -e --arg l "$label" '[.labels[]? | .name? // .] | index($l) != null' "$listed/written" >/dev/null ||
		die "the drift issue #$number has no label $label: the token may not set labels (on GitHub, a token with write access to issues and the repository's contents does), and the next run would not find it. Give the label to #$number by hand, and the token that permission"
	echo "$number"
}

# note_issue N TEXT WHAT: one comment on issue N.
note_issue() {
	printf '%s' "$2" | jq -Rs '{body: .}' | api POST "$(notes_path "$1")" -H 'Content-Type: application/json' --data-binary @- >/dev/null ||
		die "$3 was refused by the API (its answer is above)"
}

# drifted PLANFILE: what drifts, for saying what changed between two
# drifts: each change's address and action, sorted.
drifted() { provision show -json "$1" | jq -cS '[.changes[] | select(.action != "no-op") | {address, action}] | sort_by(.address)'; }

# drift_body FILE: the body of the drift issue of $dir into FILE: its
# marker, the digest of the drift and what drifts (for the next run),
# the plan in the markdown of the plan comment, and the two ways out. A
# body over the API's limit (in characters, as the APIs count them) is
# cut after the last whole change that fits, with a link to the job's
# log, which has the whole plan.
drift_body() {
	head=$(mktemp)
	{
		printf '<!-- provision-drift: %s -->\n<!-- provision-changes: %s -->\n<!-- provision-drifted: %s -->\n' \
			"$dir" "$(digest drift.plan)" "$(drifted drift.plan | jq -r 'tojson | @base64')"
		printf '**Live no longer matches the default branch** for the specs in `%s`: planned from %s at %s ([the job](%s)). The plan below is what an apply of the default branch would send to put live back.\n\n' \
			"$dir" "$(commit)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(run_url)"
	} >"$head"
	ways=$(mktemp)
	{
		printf '\n### What to do\n\n'
		printf -- '- **Put live back**: apply the default branch. Run the pipeline on it by hand with `PROVISION_APPLY_DRIFT=%s` (GitHub: the workflow'"'"'s *Run workflow* with that `apply-drift`; GitLab: *Run pipeline* with that variable): it plans the default branch again and applies it only while it makes exactly the changes shown here. Or, with the credentials, `provision apply %s`.\n' "$(digest drift.plan)" "$dir"
		printf -- '- **Keep live as it is**: merge a pull request that changes the specs to declare it. '
		case $pulled in
		0) printf '`provision pull %s` writes values edited live back into the spec files; here it has nothing to write (a deleted object is recreated by an apply, or declared no more).\n' "$dir" ;;
		2 | 4)
			if [ "$pulled" = 2 ]; then
				printf '`provision pull %s` writes what was edited live (in the dashboard tool, on the agents, in the KV store) back into the spec files; it would write this:\n' "$dir"
			else
				printf '`provision pull %s` writes what was edited live back into the spec files, but not all of it here: what it leaves is said below ("Not pulled", with why).\n' "$dir"
			fi
			printf '\n<details><summary>provision pull -diff %s</summary>\n\n```\n%s\n```\n</details>\n' "$dir" \
				"$(jq -Rrs 'split("\n") | map(select(startswith("::") | not)) | join("\n")
					| if length > 20000 then .[0:20000] + "\n(cut: the rest is in the job'"'"'s log)" else . end | gsub("```"; "` ` `")' pull.out)"
			;;
		*) printf '`provision pull %s` writes values edited live back into the spec files; here it failed to work them out (its error is in [the job'"'"'s log](%s)).\n' "$dir" "$(run_url)" ;;
		esac
		printf '\nThis issue is updated when the drift changes and closed by the first scheduled run that finds live matching the default branch.\n'
	} >"$ways"
	provision show -format=markdown drift.plan | jq -Rrs --rawfile head "$head" --rawfile ways "$ways" --argjson limit "$(issue_limit)" --arg log "$(run_url)" '
		. as $plan
		| "\n**The plan is cut here**: it is longer than an issue takes. The whole plan is in [the job'"'"'s log](\($log)).\n" as $note
		| if ($head + $plan + $ways | length) <= $limit then $head + $plan + $ways
		  else
		    ($limit - ($head + $note + $ways | length)) as $room
		    | ($plan | split("\n")) as $lines
		    | (reduce range(0; $lines | length) as $i ({n: 0, depth: 0, fence: false, cut: 0, full: false};
		        if .full then .
		        else (.n + ($lines[$i] | length) + 1) as $n
		          | if $n > $room then .full = true
		            else .n = $n
		              | if ($lines[$i] | startswith("```")) then .fence = (.fence | not)
		                elif .fence then .
		                elif ($lines[$i] | startswith("<details>")) then .depth += 1
		                elif $lines[$i] == "</details>" then .depth -= 1
		                else . end
		              | if .depth == 0 and (.fence | not) then .cut = $i + 1 else . end
		            end
		        end)) as $s
		    | $head + ($lines[0:$s.cut] | join("\n")) + "\n" + $note + $ways
		  end' >"$1"
	rm -f "$head" "$ways"
}

# what_changed OLD: says how the drift the issue showed (OLD, the base64
# of drifted, as drift_body writes it) differs from this one.
what_changed() {
	jq -nr --arg was "$1" --argjson now "$(drifted drift.plan)" '($was | try (@base64d | fromjson) catch null) as $was
		| if ($was | type) != "array" then "what drifts changed"
		  else ($now - $was | map("`\(.address)` (\(.action))")) as $new
		  | ($was - $now | map("`\(.address)`")) as $gone
		  | [if ($new | length) > 0 then "now drifts: " + ($new | join(", ")) else empty end,
		     if ($gone | length) > 0 then "no longer drifts: " + ($gone | join(", ")) else empty end]
		  | if length == 0 then "the same objects drift, with other changes (the requests differ)" else join("; ") end
		  end'
}

drift_one() {
	code=0
	provision plan -detailed-exitcode -no-color -out=drift.plan "$dir" >plan.out 2>&1 || code=$?
	cat plan.out
	case $code in
	0 | 2) ;;
	*) die "planning $dir against live failed (above): whether live matches the default branch is not known, and no issue is written" ;;
	esac
	issue=$(drift_issue) || exit 1
	number=$(printf '%s\n' "$issue" | jq -r '.number // empty')
	open=$(printf '%s\n' "$issue" | jq -r '.open // false')
	if [ "$code" = 0 ]; then
		if [ "$open" = true ]; then
			note_issue "$number" "Live matches the default branch again at $(commit) ([the job]($(run_url))): closed." "saying on #$number that live matches again"
			printf '%s\n' "$issue" | jq -j .body >"$listed/body"
			write_issue "$(edit)" "$(issue_path "$number")" "$listed/body" closed "closing the drift issue #$number" >/dev/null
			say "live matches the default branch again: closed #$number"
		else
			say "live matches the default branch: no drift, nothing written"
		fi
		rm -f drift.plan plan.out
		return
	fi
	d=$(digest drift.plan)
	shown=$(printf '%s\n' "$issue" | jq -r '.body | capture("<!-- provision-changes: (?<d>[0-9a-f]+) -->").d // empty')
	if [ "$open" = true ] && [ "$shown" = "$d" ]; then
		say "the drift #$number shows is unchanged: nothing written"
		rm -f drift.plan plan.out
		return
	fi
	pulled=0
	provision pull -diff -detailed-exitcode -no-color "$dir" >pull.out 2>&1 || pulled=$?
	body=$listed/body
	drift_body "$body"
	if [ "$open" = true ]; then
		was=$(printf '%s\n' "$issue" | jq -r '.body | capture("<!-- provision-drifted: (?<w>[^ ]*) -->").w // empty')
		write_issue "$(edit)" "$(issue_path "$number")" "$body" "" "updating the drift issue #$number" >/dev/null
		note_issue "$number" "The drift changed at $(commit) ([the job]($(run_url))): $(what_changed "$was"). The description shows it now." "saying on #$number what changed"
		say "the drift changed: updated #$number"
	elif [ -n "$number" ]; then
		write_issue "$(edit)" "$(issue_path "$number")" "$body" open "reopening the drift issue #$number" >/dev/null
		note_issue "$number" "Drift again at $(commit) ([the job]($(run_url))): reopened. The description shows it." "saying on #$number that it drifts again"
		say "drift again: reopened #$number"
	else
		number=$(write_issue POST /issues "$body" "" "opening a drift issue")
		say "live no longer matches the default branch: opened #$number"
	fi
	rm -f drift.plan plan.out pull.out
}

drift() {
	distinct
	each drift_one
}

history_one() { provision history "$dir"; }

history() { each history_one; }

snapshot_one() {
	provision snapshot -out "$snapshot" "$dir"
	output snapshot "$snapshot"
}

snapshot() { each snapshot_one; }

case ${1:-} in
plan | apply | snapshot | history | drift)
	ci >/dev/null # refused once, here, outside GitHub Actions and GitLab CI
	"$1"
	;;
install) install ;;
*) die "usage: provision-ci.sh install | plan | apply | snapshot | history | drift" ;;
esac
