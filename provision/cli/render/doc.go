// Package render draws a plan for a person, from its one model
// (plans.Plan): the text view (Text), the markdown of a pull request's
// comment, cut in parts a forge takes (Markdown), and the graph of its
// requests in DOT (DOT). It never decides anything: what it shows is in
// the plan.
package render
