package plans

import "time"

// Applied is one entry of a project's history of applies, kept by the
// cluster beside the project's lock: what an apply that completed was
// for, as the one who ran it says (apply -record: the pipeline step's
// merge commit, pull request, the digest of the changes it reviewed and
// its job), and when it completed.
type Applied struct {
	Commit string    `json:"commit"`
	Change string    `json:"change,omitempty"`
	Digest string    `json:"digest,omitempty"`
	Job    string    `json:"job,omitempty"`
	At     time.Time `json:"at"`
}

// HistoryLength is how many entries a project's history keeps, the
// newest: far more than the merges a pipeline lets queue, and a few
// kilobytes of the 512 KB a Consul key may hold.
const HistoryLength = 100
