package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ciAPI stands in for the parts of GitHub's and GitLab's REST APIs that
// provision-ci.sh calls, over real HTTP, answering as they answer:
//
//   - GitHub (https://docs.github.com/en/rest): issue comments (a body over
//     65,536 characters is 422 "Validation Failed"; a token that may not
//     write, as a fork's, gets 403 "Resource not accessible by
//     integration"), the pull requests a commit merged (with its
//     merge_commit_sha), a pull request's head, the comparison of two
//     commits (status and commits, oldest first), and the repository's
//     artifacts, whose zip is a 302 to storage;
//   - GitLab (https://docs.gitlab.com/ee/api/): merge request notes (over
//     1,000,000 characters is 400 "is too long (maximum is 1000000
//     characters)"), the merge requests a commit merged (state and
//     merge_commit_sha), a merge request's head pipeline, its jobs, the
//     comparison of two commits (from...to: the commits of to that from
//     lacks, oldest first), and job artifacts by job and by ref;
//   - issues, on both: listed by label and state (GitHub: open, closed or
//     all, open by default, pull requests among them, with a
//     pull_request field; GitLab: opened,
//     closed or all, all by default), newest first and by pages, opened
//     with a title, a body (GitHub's body, GitLab's description) and
//     labels, edited, closed and reopened (GitHub: PATCH with state;
//     GitLab: PUT with state_event), commented (GitHub's issue comments,
//     GitLab's issue notes); a body over the limit (GitHub 65,536
//     characters, GitLab 1,048,576) refused as comments are;
//   - GitHub's team memberships (/orgs/ORG/teams/TEAM/memberships/LOGIN:
//     200 with state active for a member, 404 otherwise);
//   - both: an unknown comment, pull request or artifact is 404, a missing
//     or wrong token 401.
//
// It keeps every request it answered, with its status, for the tests.
type ciAPI struct {
	srv *httptest.Server

	mu        sync.Mutex
	comments  map[string][]comment // by pull request number
	nextID    int
	merged    map[string]int // the pull request a commit merged
	main      []string       // the default branch's commits, oldest first
	heads     map[int]string // a pull request's head commit
	artifacts []artifact
	issues    []*issue            // oldest first
	teams     map[string][]string // GitHub: the members of "org/team"
	requests  []string            // "METHOD path status"
}

// issue is an issue of either system: GitHub's number is shared with the
// pull requests, GitLab's iid is the project's own.
type issue struct {
	Number int
	Title  string
	Body   string
	Open   bool
	Labels []string
	By     string
	// Pull: a pull request, which GitHub lists among the issues.
	Pull bool
}

// comment is a comment or a note, by its author (GitHub's user.login,
// GitLab's author.username).
type comment struct {
	ID     int            `json:"id"`
	Body   string         `json:"body"`
	User   map[string]any `json:"user,omitempty"`
	Author map[string]any `json:"author,omitempty"`
}

// The users the tokens act as: GitHub's workflow token posts as
// github-actions[bot]; a GitLab project access token is a bot user.
const (
	githubBot = "github-actions[bot]"
	gitlabBot = "project_5_bot_1"
)

// artifact is a file a job published: GitHub's artifact (a zip), GitLab's
// job artifacts (its id is the job's and its pipeline's).
type artifact struct {
	id          int
	name        string // provision-plan-N, provision-snapshot
	branch, sha string
	files       map[string][]byte
	created     time.Time
}

// The tokens the API takes; readToken may only read.
const (
	token     = "t0ken-write"
	readToken = "t0ken-read"
)

func newCIAPI(t testing.TB) *ciAPI {
	a := &ciAPI{comments: map[string][]comment{}, nextID: 1000, merged: map[string]int{}, heads: map[int]string{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// env is what a job of either CI system needs to reach the API.
func (a *ciAPI) env() []string {
	return []string{"GITHUB_API_URL=" + a.srv.URL, "GITHUB_TOKEN=" + token,
		"CI_API_V4_URL=" + a.srv.URL + "/api/v4", "CI_PROJECT_ID=5", "GITLAB_TOKEN=" + token, "CI_JOB_TOKEN=" + token}
}

// someoneSays posts a comment on pull request n as another user.
func (a *ciAPI) someoneSays(n int, body string) { a.says(n, "mallory", body) }

// says posts a comment on pull request n as the user login.
func (a *ciAPI) says(n int, login, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	key := strconv.Itoa(n)
	a.comments[key] = append(a.comments[key], comment{ID: a.nextID, Body: body, User: map[string]any{"login": login}, Author: map[string]any{"username": login}})
}

// team makes login a member of the GitHub team org/name.
func (a *ciAPI) team(orgTeam string, logins ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.teams == nil {
		a.teams = map[string][]string{}
	}
	a.teams[orgTeam] = append(a.teams[orgTeam], logins...)
}

// upload publishes a job's artifact.
func (a *ciAPI) upload(name, branch, sha string, files map[string][]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.artifacts = append(a.artifacts, artifact{id: a.nextID, name: name, branch: branch, sha: sha, files: files,
		created: time.Date(2026, 1, 1, 0, 0, a.nextID, 0, time.UTC)})
}

// pull opens pull request n at head, and merge makes sha its merge.
func (a *ciAPI) pull(n int, head string) { a.mu.Lock(); a.heads[n] = head; a.mu.Unlock() }
func (a *ciAPI) merge(sha string, n int) { a.mu.Lock(); a.merged[sha] = n; a.mu.Unlock() }

// push makes sha the default branch's newest commit (once: a job's re-run
// is of the same commit).
func (a *ciAPI) push(sha string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.Contains(a.main, sha) {
		a.main = append(a.main, sha)
	}
}

// posted are pull request n's comments, oldest first.
func (a *ciAPI) posted(n int) []comment {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.comments[strconv.Itoa(n)])
}

// took returns the requests answered since the last call, one a line.
func (a *ciAPI) took() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := strings.Join(a.requests, "\n")
	a.requests = nil
	return s
}

func (a *ciAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec := &recorder{ResponseWriter: w, status: 200}
	a.route(rec, r)
	a.requests = append(a.requests, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status))
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(s int) { r.status = s; r.ResponseWriter.WriteHeader(s) }

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (a *ciAPI) route(w http.ResponseWriter, r *http.Request) {
	if blob, ok := strings.CutPrefix(r.URL.Path, "/blobs/"); ok { // storage: a signed URL, no token
		a.blob(w, blob)
		return
	}
	github := !strings.HasPrefix(r.URL.Path, "/api/v4/")
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !github {
		tok = r.Header.Get("PRIVATE-TOKEN") + r.Header.Get("JOB-TOKEN")
	}
	if tok != token && tok != readToken {
		answer(w, 401, map[string]any{"message": "Bad credentials"})
		return
	}
	if r.Method != "GET" && tok == readToken {
		if github {
			answer(w, 403, map[string]any{"message": "Resource not accessible by integration"})
		} else {
			answer(w, 403, map[string]any{"message": "403 Forbidden"})
		}
		return
	}
	if !github && r.URL.Path == "/api/v4/user" {
		answer(w, 200, map[string]any{"username": gitlabBot})
		return
	}
	if p := strings.Split(r.URL.Path, "/"); github && match(p, "", "orgs", "*", "teams", "*", "memberships", "*") {
		if slices.Contains(a.teams[p[2]+"/"+p[4]], p[6]) {
			answer(w, 200, map[string]any{"state": "active", "role": "member"})
		} else {
			a.notFound(w)
		}
		return
	}
	var path string
	var ok bool
	if github {
		path, ok = strings.CutPrefix(r.URL.Path, "/repos/acme/specs/")
	} else {
		path, ok = strings.CutPrefix(r.URL.Path, "/api/v4/projects/5/")
	}
	if !ok {
		a.notFound(w)
		return
	}
	if github {
		a.github(w, r, strings.Split(path, "/"))
	} else {
		a.gitlab(w, r, strings.Split(path, "/"))
	}
}

func (a *ciAPI) notFound(w http.ResponseWriter) {
	answer(w, 404, map[string]any{"message": "Not Found"})
}

// github answers a path under /repos/acme/specs/.
func (a *ciAPI) github(w http.ResponseWriter, r *http.Request, p []string) {
	switch {
	case match(p, "issues", "*", "comments"):
		a.commentsOf(w, r, p[1], 65536, true)
	case match(p, "issues", "comments", "*"):
		a.commentByID(w, r, "", p[2], "PATCH", 65536, true)
	case match(p, "commits", "*", "pulls"):
		a.mergedBy(w, p[1], "number")
	case match(p, "compare", "*"):
		base, head, _ := strings.Cut(p[1], "...")
		if later, ok := a.compare(w, base, head); ok {
			status := map[bool]string{true: "ahead", false: "behind"}[len(later) > 0]
			if base == head {
				status = "identical"
			}
			commits := []map[string]any{}
			for _, sha := range later {
				commits = append(commits, map[string]any{"sha": sha})
			}
			answer(w, 200, map[string]any{"status": status, "ahead_by": len(later), "total_commits": len(later), "commits": commits})
		}
	case match(p, "pulls", "*"):
		if n, head, ok := a.pullOf(w, p[1]); ok {
			answer(w, 200, map[string]any{"number": n, "head": map[string]any{"sha": head}})
		}
	case match(p, "issues"):
		a.issuesOf(w, r, true)
	case match(p, "issues", "*"):
		a.issueByNumber(w, r, p[1], true)
	case match(p, "actions", "artifacts"):
		list := []map[string]any{}
		for _, art := range a.artifacts {
			if art.name == r.URL.Query().Get("name") {
				list = append(list, map[string]any{"id": art.id, "name": art.name, "expired": false, "created_at": art.created,
					"workflow_run": map[string]any{"head_branch": art.branch, "head_sha": art.sha}})
			}
		}
		slices.Reverse(list) // newest first, as GitHub lists them
		answer(w, 200, map[string]any{"total_count": len(list), "artifacts": list})
	case match(p, "actions", "artifacts", "*", "zip"):
		id, _ := strconv.Atoi(p[2])
		if !slices.ContainsFunc(a.artifacts, func(x artifact) bool { return x.id == id }) {
			a.notFound(w)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/blobs/%d.zip", id), http.StatusFound)
	default:
		a.notFound(w)
	}
}

// gitlab answers a path under /api/v4/projects/5/.
func (a *ciAPI) gitlab(w http.ResponseWriter, r *http.Request, p []string) {
	switch {
	case match(p, "merge_requests", "*", "notes"):
		a.commentsOf(w, r, p[1], 1000000, false)
	case match(p, "merge_requests", "*", "notes", "*"):
		a.commentByID(w, r, p[1], p[3], "PUT", 1000000, false)
	case match(p, "issues"):
		a.issuesOf(w, r, false)
	case match(p, "issues", "*"):
		a.issueByNumber(w, r, p[1], false)
	case match(p, "issues", "*", "notes"):
		a.commentsOf(w, r, "issue-"+p[1], 1000000, false)
	case match(p, "repository", "commits", "*", "merge_requests"):
		a.mergedBy(w, p[2], "iid")
	case match(p, "repository", "compare"):
		if later, ok := a.compare(w, r.URL.Query().Get("from"), r.URL.Query().Get("to")); ok {
			commits := []map[string]any{}
			for _, sha := range later {
				commits = append(commits, map[string]any{"id": sha})
			}
			answer(w, 200, map[string]any{"commits": commits, "compare_same_ref": r.URL.Query().Get("from") == r.URL.Query().Get("to")})
		}
	case match(p, "merge_requests", "*"):
		n, head, ok := a.pullOf(w, p[1])
		if !ok {
			return
		}
		mr := map[string]any{"iid": n, "sha": head, "head_pipeline": nil}
		if art := a.newest(fmt.Sprintf("provision-plan-%d", n), func(x artifact) bool { return x.sha == head }); art != nil {
			mr["head_pipeline"] = map[string]any{"id": art.id}
		}
		answer(w, 200, mr)
	case match(p, "pipelines", "*", "jobs"):
		id, _ := strconv.Atoi(p[1])
		list := []map[string]any{}
		for _, art := range a.artifacts {
			if art.id == id {
				list = append(list, map[string]any{"id": art.id, "name": "provision-plan", "status": "success"})
			}
		}
		answer(w, 200, list)
	case len(p) == 4 && match(p[:3], "jobs", "*", "artifacts"):
		id, _ := strconv.Atoi(p[1])
		a.file(w, a.newest("", func(x artifact) bool { return x.id == id }), p[3])
	case len(p) == 5 && match(p[:4], "jobs", "artifacts", "*", "raw"):
		a.file(w, a.newest(r.URL.Query().Get("job"), func(x artifact) bool { return x.branch == p[2] }), p[4])
	default:
		a.notFound(w)
	}
}

// mergedBy answers the pull requests commit sha merged, each its number
// under key, with its merge commit (and GitLab's state).
func (a *ciAPI) mergedBy(w http.ResponseWriter, sha, key string) {
	list := []map[string]any{}
	if n, ok := a.merged[sha]; ok {
		list = append(list, map[string]any{key: n, "merge_commit_sha": sha, "state": "merged"})
	}
	answer(w, 200, list)
}

// compare is the default branch's commits after base up to head, oldest
// first (none when head is base or older); false, answered 404, when
// either is not on it.
func (a *ciAPI) compare(w http.ResponseWriter, base, head string) ([]string, bool) {
	b, h := slices.Index(a.main, base), slices.Index(a.main, head)
	if b < 0 || h < 0 {
		answer(w, 404, map[string]any{"message": "Not Found"})
		return nil, false
	}
	if h <= b {
		return nil, true
	}
	return slices.Clone(a.main[b+1 : h+1]), true
}

// pullOf is pull request number's head; false, answered 404, when there
// is no such pull request.
func (a *ciAPI) pullOf(w http.ResponseWriter, number string) (int, string, bool) {
	n, _ := strconv.Atoi(number)
	head, ok := a.heads[n]
	if !ok {
		a.notFound(w)
	}
	return n, head, ok
}

// match says whether the path's parts are pattern's, "*" matching any.
func match(p []string, pattern ...string) bool {
	if len(p) != len(pattern) {
		return false
	}
	for i := range p {
		if pattern[i] != "*" && pattern[i] != p[i] {
			return false
		}
	}
	return true
}

// newest is the newest artifact named name (any, when empty) that keep
// takes, or nil.
func (a *ciAPI) newest(name string, keep func(artifact) bool) *artifact {
	for i := len(a.artifacts) - 1; i >= 0; i-- {
		x := a.artifacts[i]
		if (name == "" || x.name == name) && keep(x) {
			return &a.artifacts[i]
		}
	}
	return nil
}

func (a *ciAPI) file(w http.ResponseWriter, art *artifact, name string) {
	if art == nil || art.files[name] == nil {
		answer(w, 404, map[string]any{"message": "404 Not found"})
		return
	}
	w.Write(art.files[name])
}

func (a *ciAPI) blob(w http.ResponseWriter, name string) {
	id, _ := strconv.Atoi(strings.TrimSuffix(name, ".zip"))
	art := a.newest("", func(x artifact) bool { return x.id == id })
	if art == nil {
		http.NotFound(w, nil)
		return
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, data := range art.files {
		f, _ := z.Create(name)
		f.Write(data)
	}
	z.Close()
	w.Write(b.Bytes())
}

// commentsOf lists (by pages) or creates the comments of pull request n.
func (a *ciAPI) commentsOf(w http.ResponseWriter, r *http.Request, n string, limit int, github bool) {
	switch r.Method {
	case "GET":
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if per <= 0 {
			per = 30
		}
		page = max(page, 1)
		list := a.comments[n]
		lo, hi := min((page-1)*per, len(list)), min(page*per, len(list))
		answer(w, 200, append([]comment{}, list[lo:hi]...))
	case "POST":
		body, ok := a.body(w, r, limit, github)
		if !ok {
			return
		}
		a.nextID++
		c := comment{ID: a.nextID, Body: body, User: map[string]any{"login": githubBot}}
		if !github {
			c = comment{ID: a.nextID, Body: body, Author: map[string]any{"username": gitlabBot}}
		}
		a.comments[n] = append(a.comments[n], c)
		answer(w, 201, c)
	default:
		answer(w, 405, map[string]any{"message": "Method Not Allowed"})
	}
}

// commentByID edits (with the method edit) or deletes one comment (of
// pull request n on GitLab, of any on GitHub).
func (a *ciAPI) commentByID(w http.ResponseWriter, r *http.Request, n, idText, edit string, limit int, github bool) {
	id, _ := strconv.Atoi(idText)
	for pr, list := range a.comments {
		i := slices.IndexFunc(list, func(c comment) bool { return c.ID == id })
		if i < 0 || (n != "" && pr != n) {
			continue
		}
		switch r.Method {
		case edit:
			body, ok := a.body(w, r, limit, github)
			if !ok {
				return
			}
			list[i].Body = body
			answer(w, 200, list[i])
		case "DELETE":
			a.comments[pr] = slices.Delete(list, i, i+1)
			w.WriteHeader(204)
		default:
			answer(w, 405, map[string]any{"message": "Method Not Allowed"})
		}
		return
	}
	a.notFound(w)
}

// body reads a comment's text, refusing it as each API does when it is
// over the limit.
func (a *ciAPI) body(w http.ResponseWriter, r *http.Request, limit int, github bool) (string, bool) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		answer(w, 400, map[string]any{"message": "Problems parsing JSON"})
		return "", false
	}
	if n := len([]rune(in.Body)); n > limit {
		if github {
			answer(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]any{{"resource": "IssueComment", "code": "custom", "field": "body",
				"message": fmt.Sprintf("body is too long (maximum is %d characters)", limit)}}})
		} else {
			answer(w, 400, map[string]any{"message": map[string]any{"note": []string{fmt.Sprintf("is too long (maximum is %d characters)", limit)}}})
		}
		return "", false
	}
	return in.Body, true
}

// Issue bodies' limits: GitHub's is its comments'; GitLab's is
// Issuable's DESCRIPTION_LENGTH_MAX, 1 megabyte.
const (
	githubIssueLimit = 65536
	gitlabIssueLimit = 1048576
)

// issuesOf lists (newest first, by pages) or opens issues.
func (a *ciAPI) issuesOf(w http.ResponseWriter, r *http.Request, github bool) {
	switch r.Method {
	case "GET":
		q := r.URL.Query()
		state := q.Get("state")
		if state == "" && github {
			state = "open"
		}
		var list []map[string]any
		for i := len(a.issues) - 1; i >= 0; i-- {
			is := a.issues[i]
			open := map[bool]string{true: "open", false: "closed"}[is.Open]
			if !github && is.Open {
				open = "opened"
			}
			if (state != "" && state != "all" && state != open) || !labelled(is, q.Get("labels")) || (is.Pull && !github) {
				continue
			}
			list = append(list, a.issueJSON(is, github))
		}
		per, _ := strconv.Atoi(q.Get("per_page"))
		page, _ := strconv.Atoi(q.Get("page"))
		if per <= 0 {
			per = 30
		}
		page = max(page, 1)
		lo, hi := min((page-1)*per, len(list)), min(page*per, len(list))
		answer(w, 200, append([]map[string]any{}, list[lo:hi]...))
	case "POST":
		in, ok := a.issueIn(w, r, github)
		if !ok {
			return
		}
		is := &issue{Number: len(a.issues) + 100, Title: in.Title, Body: in.body(github), Open: true, Labels: in.labels(github), By: githubBot}
		if !github {
			is.By = gitlabBot
		}
		a.issues = append(a.issues, is)
		answer(w, 201, a.issueJSON(is, github))
	default:
		answer(w, 405, map[string]any{"message": "Method Not Allowed"})
	}
}

// issueByNumber edits, closes or reopens one issue.
func (a *ciAPI) issueByNumber(w http.ResponseWriter, r *http.Request, number string, github bool) {
	n, _ := strconv.Atoi(number)
	i := slices.IndexFunc(a.issues, func(is *issue) bool { return is.Number == n })
	edit := map[bool]string{true: "PATCH", false: "PUT"}[github]
	switch {
	case i < 0:
		a.notFound(w)
	case r.Method == "GET":
		answer(w, 200, a.issueJSON(a.issues[i], github))
	case r.Method != edit:
		answer(w, 405, map[string]any{"message": "Method Not Allowed"})
	default:
		in, ok := a.issueIn(w, r, github)
		if !ok {
			return
		}
		is := a.issues[i]
		if in.Body != nil || in.Description != nil {
			is.Body = in.body(github)
		}
		switch {
		case in.State == "open" || in.StateEvent == "reopen":
			is.Open = true
		case in.State == "closed" || in.StateEvent == "close":
			is.Open = false
		}
		answer(w, 200, a.issueJSON(is, github))
	}
}

// someoneOpens opens an issue as another user, with labels.
func (a *ciAPI) someoneOpens(title, body string, labels ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issues = append(a.issues, &issue{Number: len(a.issues) + 100, Title: title, Body: body, Open: true, Labels: labels, By: "mallory"})
}

// issueNotes are the comments of issue n on system (github, gitlab),
// oldest first: GitHub's issues share their numbers and comments with
// pull requests, GitLab's issue notes are apart from merge requests'.
func (a *ciAPI) issueNotes(system string, n int) []comment {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := strconv.Itoa(n)
	if system == "gitlab" {
		key = "issue-" + key
	}
	return slices.Clone(a.comments[key])
}

// labelledPull opens a pull request as the step's user (a job's token), with
// body and labels: GitHub lists it among the issues.
func (a *ciAPI) labelledPull(title, body string, labels ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issues = append(a.issues, &issue{Number: len(a.issues) + 100, Title: title, Body: body, Open: true, Labels: labels, By: githubBot, Pull: true})
}

// issued are the issues, oldest first.
func (a *ciAPI) issued() []issue {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]issue, len(a.issues))
	for i, is := range a.issues {
		out[i] = *is
	}
	return out
}

// issueIn is what a request that opens or edits an issue sends.
type issueIn struct {
	Title       string  `json:"title"`
	Body        *string `json:"body"`
	Description *string `json:"description"`
	State       string  `json:"state"`
	StateEvent  string  `json:"state_event"`
	Labels      any     `json:"labels"` // GitHub: a list; GitLab: a comma-separated string
}

func (in issueIn) body(github bool) string {
	if github && in.Body != nil {
		return *in.Body
	}
	if !github && in.Description != nil {
		return *in.Description
	}
	return ""
}

func (in issueIn) labels(github bool) []string {
	switch l := in.Labels.(type) {
	case []any:
		if github {
			var out []string
			for _, x := range l {
				out = append(out, fmt.Sprint(x))
			}
			return out
		}
	case string:
		if !github {
			return strings.Split(l, ",")
		}
	}
	return nil
}

// issueIn reads an issue's fields, refusing a body over the limit as each
// API does.
func (a *ciAPI) issueIn(w http.ResponseWriter, r *http.Request, github bool) (issueIn, bool) {
	var in issueIn
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		answer(w, 400, map[string]any{"message": "Problems parsing JSON"})
		return in, false
	}
	if n := len([]rune(in.body(github))); github && n > githubIssueLimit {
		answer(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]any{{"resource": "Issue", "code": "custom", "field": "body",
			"message": fmt.Sprintf("body is too long (maximum is %d characters)", githubIssueLimit)}}})
		return in, false
	} else if !github && n > gitlabIssueLimit {
		answer(w, 400, map[string]any{"message": map[string]any{"description": []string{fmt.Sprintf("is too long (maximum is %d characters)", gitlabIssueLimit)}}})
		return in, false
	}
	return in, true
}

// labelled says whether the issue has every label of the
// comma-separated list.
func labelled(is *issue, list string) bool {
	for _, l := range strings.Split(list, ",") {
		if l != "" && !slices.Contains(is.Labels, l) {
			return false
		}
	}
	return true
}

func (a *ciAPI) issueJSON(is *issue, github bool) map[string]any {
	if github {
		labels := []map[string]any{}
		for _, l := range is.Labels {
			labels = append(labels, map[string]any{"name": l})
		}
		out := map[string]any{"number": is.Number, "title": is.Title, "body": is.Body, "state": map[bool]string{true: "open", false: "closed"}[is.Open],
			"labels": labels, "user": map[string]any{"login": is.By}}
		if is.Pull {
			out["pull_request"] = map[string]any{"url": fmt.Sprintf("/repos/acme/specs/pulls/%d", is.Number)}
		}
		return out
	}
	return map[string]any{"iid": is.Number, "title": is.Title, "description": is.Body, "state": map[bool]string{true: "opened", false: "closed"}[is.Open],
		"labels": is.Labels, "author": map[string]any{"username": is.By}}
}
