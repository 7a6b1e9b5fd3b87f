package provision

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"golang.org/x/crypto/argon2"
)

// outputs are the values of the root's output blocks, as a plan carries
// them: JSON, a sensitive one "(sensitive)", one not known null.
// variables are the values of the variables as the plan keeps them: a
// sensitive one's as a keyed digest alone.
func variables(project string, vars map[string]*schema.Variable) map[string]plans.Variable {
	saved := schema.SavedValues(vars)
	out := make(map[string]plans.Variable, len(saved))
	for name, b := range saved {
		out[name] = plans.Variable{Value: b}
	}
	for name, v := range vars {
		if b, ok := schema.SensitiveValue(v); ok {
			// The salt is the project's and the variable's, not random, so
			// that the same specs always make the same plan (a golden file,
			// a snapshot's plan held to the live one); no table of digests
			// serves two projects or two variables.
			salt := sha256.Sum256([]byte("provision plan variable\x00" + project + "\x00" + name))
			out[name] = plans.Variable{Sensitive: true, Digest: keyedDigest(hex.EncodeToString(salt[:16]), b)}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// keyedDigest is the digest a plan keeps of a sensitive value b, under
// salt (hex): argon2id (RFC 9106), memory-hard, so that a plan file
// holds no digest anyone could look up and each guess at it costs
// 16 MiB and two passes. A short secret can still be guessed from a plan
// file at that cost: plan files are written readable by their owner only.
func keyedDigest(salt string, b []byte) string {
	key := argon2.IDKey(b, []byte(salt), 2, 16<<10, 1, 32)
	return "argon2id:" + salt + ":" + hex.EncodeToString(key)
}

// SensitiveMoved says which sensitive variable has another value now than
// the saved plan was made with; "" when none.
func SensitiveMoved(saved map[string]plans.Variable, vars map[string]*schema.Variable) string {
	for _, name := range slices.Sorted(maps.Keys(saved)) {
		sv := saved[name]
		if !sv.Sensitive {
			continue
		}
		parts := strings.Split(sv.Digest, ":")
		b, ok := schema.SensitiveValue(vars[name])
		if len(parts) != 3 || !ok || subtle.ConstantTimeCompare([]byte(keyedDigest(parts[1], b)), []byte(sv.Digest)) != 1 {
			return name
		}
	}
	return ""
}

// sources digests the files a load read (by path relative to dir) and the
// variables' final values, but the sensitive ones (plans.Sources).
func sources(dir string, files map[string]*hcl.File, vars map[string]*schema.Variable) *plans.Sources {
	out := &plans.Sources{Files: map[string]string{}, Variables: map[string]string{}}
	for name, f := range files {
		if strings.HasPrefix(name, "<") || f.Bytes == nil {
			// A value from outside any file ("<-var x>"), or a variable
			// file (whose text is never kept): digested as its variables'.
			continue
		}
		// A shared module's files are outside dir (../../modules/kv), and
		// named from it too, so that the plan applies from anywhere.
		if rel, err := filepath.Rel(dir, name); err == nil {
			name = filepath.ToSlash(rel)
		}
		out.Files[name] = digest(f.Bytes)
	}
	for name, v := range vars {
		if v.Sensitive || v.Value == cty.NilVal {
			continue
		}
		b, err := ctyjson.Marshal(v.Value, v.Value.Type())
		if err != nil {
			b = []byte(v.Value.GoString())
		}
		out.Variables[name] = digest(b)
	}
	return out
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
