// Package plans is the plan model: what -json prints, what -out saves and
// what every view is rendered from. It holds the addresses of objects
// (addrs.Addr), the actions and their reasons, a Plan of ordered Changes each
// listing the exact HTTP requests it sends, the live state a plan is made
// from (Live, one State per backend), the gates a proxy serves, the
// selection of -target and -exclude, the redaction of secrets, and the
// plan file. It does no I/O but reading and writing a plan file.
package plans
