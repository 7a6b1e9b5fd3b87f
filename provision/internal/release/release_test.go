package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's folder.
const root = "../../.."

// TestRelease makes a release twice from this commit and holds it to its
// promises: byte-identical files, every file in SHA256SUMS, and an
// archive that the pipeline's install step takes (its checksum checked)
// and whose binary says the version it was stamped with; a changed
// archive is refused.
func TestRelease(t *testing.T) {
	if os.Getenv("PROVISION_RELEASE_TEST") != "1" {
		t.Skip("builds provision for six platforms, twice: make test runs it alone, with PROVISION_RELEASE_TEST=1")
	}
	ctx := context.Background()
	const version = "v0.0.0-test"
	// Each run writes where a release's files are downloaded from:
	// <releases>/<version>/<file>.
	ra, rb := t.TempDir(), t.TempDir()
	a, b := filepath.Join(ra, version), filepath.Join(rb, version)
	first, err := release(ctx, root, version, a, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	second, err := release(ctx, root, version, b, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, second) {
		t.Fatalf("two runs wrote different files:\n%v\n%v", first, second)
	}
	if len(first) != 2*len(platforms)+1 {
		t.Errorf("%d files, want an archive and a bill of materials per platform and SHA256SUMS: %v", len(first), first)
	}
	for _, f := range first {
		x, _ := os.ReadFile(filepath.Join(a, f.name))
		y, _ := os.ReadFile(filepath.Join(b, f.name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs from the same commit", f.name)
		}
	}
	sums, _ := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = a
	if out, err := check.CombinedOutput(); err != nil || strings.Count(string(out), ": OK") != 2*len(platforms) {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s\n%s", err, out, sums)
	}
	var bom struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name string `json:"name"`
		} `json:"components"`
	}
	raw, _ := os.ReadFile(filepath.Join(a, "provision_"+version+"_linux_amd64.cdx.json"))
	if err := json.Unmarshal(raw, &bom); err != nil || bom.BOMFormat != "CycloneDX" ||
		!slices.ContainsFunc(bom.Components, func(c struct {
			Name string `json:"name"`
		}) bool {
			return c.Name == "github.com/hashicorp/hcl/v2"
		}) {
		t.Errorf("the bill of materials is not CycloneDX with hcl among its components (%v): %.300s", err, raw)
	}

	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return
	}
	install := func(t *testing.T, releases string) (string, string, error) {
		bin := t.TempDir()
		cmd := exec.Command("sh", filepath.Join(root, script), "install")
		cmd.Env = append(os.Environ(), "PROVISION_VERSION="+version, "PROVISION_RELEASES=file://"+releases, "PROVISION_BIN="+bin, "GITHUB_PATH=")
		out, err := cmd.CombinedOutput()
		return bin, string(out), err
	}
	t.Run("install", func(t *testing.T) {
		bin, out, err := install(t, ra)
		if err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		got, err := exec.Command(filepath.Join(bin, "provision"), "version", "-json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var v build
		if err := json.Unmarshal(got, &v); err != nil || v.Version != version || v.Module != "github.com/provision-dev/provision" || len(v.Revision) != 40 {
			t.Errorf("provision version -json of the released binary: %v\n%s", err, got)
		}
	})
	t.Run("changed archive refused", func(t *testing.T) {
		name := filepath.Join(b, "provision_"+version+"_linux_"+runtime.GOARCH+".tar.gz")
		if err := os.WriteFile(name, []byte("not the release"), 0o644); err != nil {
			t.Fatal(err)
		}
		bin, out, err := install(t, rb)
		if err == nil || !strings.Contains(out, "does not match its checksum") {
			t.Errorf("install of a changed archive: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(bin, "provision")); err == nil {
			t.Error("the changed archive's binary was installed")
		}
	})
}

// build is provision version -json's object.
type build struct {
	Version  string `json:"version"`
	Module   string `json:"module"`
	Revision string `json:"revision"`
}

func TestReleaseRefusesAVersionThatIsNotSemver(t *testing.T) {
	for _, v := range []string{"", "1.2.0", "v1.2", "v1.2.0+meta", "latest"} {
		if _, err := release(context.Background(), root, v, t.TempDir(), os.Stderr); err == nil || !strings.Contains(err.Error(), "is not vMAJOR.MINOR.PATCH") {
			t.Errorf("release(%q): %v", v, err)
		}
	}
}
