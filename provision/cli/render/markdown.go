package render

import (
	"fmt"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// MarkdownLimit is the largest part Markdown returns: GitHub refuses
// comments over 65,536 characters.
const MarkdownLimit = 65000

// Markdown renders a plan for a pull-request comment: a summary
// table, then each change's details collapsed. A large plan comes in
// several parts, each under MarkdownLimit characters, the summary table
// included (it continues from part to part, its header repeated). Pass a
// Redacted plan.
func Markdown(p *plans.Plan) []string {
	var head strings.Builder
	fmt.Fprintf(&head, "### provision plan for project `%s`\n\n", p.Project)
	for _, b := range p.Backends {
		for _, n := range b.Notes {
			fmt.Fprintf(&head, "> `%s`: %s\n\n", b.Name, n)
		}
	}
	if !p.Summary.HasChanges() {
		fmt.Fprintf(&head, "No changes. The live state matches the specs (%d %s up to date).\n", p.Summary.NoOp, plans.Plural(p.Summary.NoOp, "object"))
		head.WriteString(markdownPolicies(p.Policies))
		return []string{head.String()}
	}
	fmt.Fprintf(&head, "**%s**\n\n", p.Summary.Line())
	head.WriteString(markdownPolicies(p.Policies))
	const tableHead = "| | address | action | requests | reason |\n|---|---|---|---|---|\n"
	var rows, details []string
	for _, c := range p.Changes {
		if c.Action == plans.NoOp {
			continue
		}
		rows = append(rows, fmt.Sprintf("| `%s` | `%s` | %s | %d | %s |\n", c.Action.Symbol(), c.Addr, c.Action, len(c.Requests), strings.ReplaceAll(c.Reason, "|", "\\|")))
		r := &renderer{}
		r.change(c)
		body := strings.TrimLeft(r.buf.String(), "\n")
		section := fmt.Sprintf("<details><summary><code>%s %s</code></summary>\n\n```diff\n%s```\n\n</details>\n", c.Action.Symbol(), c.Addr, body)
		if len(section) > MarkdownLimit/2 {
			section = section[:MarkdownLimit/2] + "\n```\n\n_(cut: run `provision show -json` on the plan artifact for all of it)_\n\n</details>\n"
		}
		details = append(details, section)
	}
	// Leave room for the part header added below.
	const room = MarkdownLimit - 64
	parts := []string{head.String() + tableHead}
	inTable := true
	add := func(chunk string, table bool) {
		last := &parts[len(parts)-1]
		if len(*last)+len(chunk) > room {
			parts = append(parts, "")
			last = &parts[len(parts)-1]
			if table {
				*last = tableHead
			}
		}
		*last += chunk
	}
	for _, row := range rows {
		add(row, true)
	}
	for _, d := range details {
		if inTable {
			d = "\n" + d
			inTable = false
		}
		add(d, false)
	}
	if len(parts) > 1 {
		for i := range parts {
			parts[i] = fmt.Sprintf("<!-- provision plan, part %d of %d -->\n", i+1, len(parts)) + parts[i]
		}
	}
	return parts
}

// policyObjects is how many of the objects a policy fails on the comment
// lists: the rest are counted, so that the section stays short.
const policyObjects = 20

// commentText keeps a message one line of text in a comment: no line
// breaks, no HTML, no code span of its own.
var commentText = strings.NewReplacer("\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "`", "'")

// markdownPolicies is the comment's section of the policies' results: a
// line of counts, then a section per failed policy, each object it fails
// on with its message; an advisory policy's section folded. "" without
// policies.
func markdownPolicies(results []plans.PolicyResult) string {
	if len(results) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#### Policies\n\n%s\n\n", policyLine(results))
	var order []string
	failures := map[string][]plans.PolicyResult{}
	for _, r := range plans.Failed(results) {
		if failures[r.Policy] == nil {
			order = append(order, r.Policy)
		}
		failures[r.Policy] = append(failures[r.Policy], r)
	}
	for _, name := range order {
		rs := failures[name]
		level := rs[0].Level
		if rs[0].Overridden {
			level += ", overridden"
		}
		title := fmt.Sprintf("%s (%s) fails on %d %s, %s line %d", name, level, len(rs), plans.Plural(len(rs), "object"), rs[0].Range.Filename, rs[0].Range.Start.Line)
		var list strings.Builder
		for i, r := range rs {
			if i == policyObjects {
				fmt.Fprintf(&list, "- and %d more (the plan's JSON has every result)\n", len(rs)-i)
				break
			}
			fmt.Fprintf(&list, "- `%s` (%s): %s\n", r.Address, r.Operation, commentText.Replace(r.Message))
		}
		if rs[0].Level == "advisory" {
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n%s\n</details>\n\n", title, list.String())
		} else {
			fmt.Fprintf(&b, "**%s**\n\n%s\n", title, list.String())
		}
	}
	return b.String()
}
