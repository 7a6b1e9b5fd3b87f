package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RootEnv names the folder the specs' modules and files may be anywhere
// inside, where the specs are not in a git repository (-root sets it).
const RootEnv = "PROVISION_ROOT"

// bound is the folder a load of the specs reads inside: the repository
// that holds them (the nearest folder above them with .git, or the one
// PROVISION_ROOT names), so that a module kept once at its top serves
// every project; the specs' own folder when there is neither. As
// Terraform, which reads a local module source anywhere on the disk,
// does not, a spec never reads outside it: a pull request's spec is run
// by the pipeline, which holds credentials.
type bound struct {
	dir   string // absolute, symbolic links resolved
	name  string // how a diagnostic names it
	short string // how a diagnostic's summary names it
}

// Bound is the folder a load of the specs in dir reads inside (bound),
// absolute and with its links resolved: PROVISION_ROOT in env, else the
// nearest folder above them with .git, else dir itself.
func Bound(dir string, env []string) (string, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", err
	}
	b, err := boundOf(root, env)
	return b.dir, err
}

// boundOf finds the bound of the specs in dir, absolute and with its
// links resolved (root).
func boundOf(root string, env []string) (bound, error) {
	given := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, RootEnv+"="); ok {
			given = v
		}
	}
	if given != "" {
		abs, err := filepath.Abs(given)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return bound{}, fmt.Errorf("%s=%s cannot be read: %v", RootEnv, given, unwrapPath(err))
		}
		if !under(abs, root) && abs != root {
			return bound{}, fmt.Errorf("%s=%s does not hold the specs: they are at %s", RootEnv, given, root)
		}
		return bound{dir: abs, name: fmt.Sprintf("the root %s (%s)", given, RootEnv), short: "the root"}, nil
	}
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return bound{dir: d, name: "the repository that holds the specs (the folder with .git above them)", short: "the repository"}, nil
		}
		if filepath.Dir(d) == d {
			return bound{dir: root, name: "the directory of the specs", short: "the specs"}, nil
		}
	}
}
