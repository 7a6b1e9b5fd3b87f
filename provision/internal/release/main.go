// Command release writes a release of provision to a folder: a static
// binary for each platform teams run it on, built with -trimpath and the
// version stamped, in a .tar.gz (a .zip for Windows) with the README; a
// CycloneDX bill of materials of the Go modules linked into each binary;
// and SHA256SUMS, in sha256sum's format, of every other file. Two runs
// from the same commit write byte-identical files: the go command's
// builds are reproducible once paths are trimmed and the build ID left
// out, and the archives are written here with the commit's time on every
// entry, a fixed owner and mode, and gzip's header without a name or time.
//
// Usage (make release VERSION=v1.2.0):
//
//	go run ./provision/internal/release -version v1.2.0 [-out dist]
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// script is the pipeline step's script, shipped in each archive for the
// GitLab template to run (the GitHub action runs its own copy).
const script = ".github/actions/provision/provision-ci.sh"

// sbomTool is the bill-of-materials generator, pinned, fetched and built
// by the go command from the module proxy on first use.
const sbomTool = "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0"

// platforms are the release's targets, GOOS/GOARCH.
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// semver is a release version as Go modules take it: vMAJOR.MINOR.PATCH
// with an optional pre-release.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func main() {
	version := flag.String("version", "", "the release's version, vMAJOR.MINOR.PATCH[-PRE] (required)")
	out := flag.String("out", "dist", "the folder to write, emptied first")
	flag.Parse()
	files, err := release(context.Background(), ".", *version, *out, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Printf("%10d  %s\n", f.size, filepath.Join(*out, f.name))
	}
}

// file is one file of a release.
type file struct {
	name string
	size int64
}

// release builds the release of the module at root into out and returns
// its files, in the order of SHA256SUMS and then that file.
func release(ctx context.Context, root, version, out string, progress io.Writer) ([]file, error) {
	if !semver.MatchString(version) {
		return nil, fmt.Errorf("the version %q is not vMAJOR.MINOR.PATCH[-PRE] (for example v1.2.0 or v1.3.0-rc.1)", version)
	}
	epoch, err := sourceDate(ctx, root)
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	step, err := os.ReadFile(filepath.Join(root, script))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "provision-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if err := goCmd(ctx, root, []string{"GOBIN=" + work}, "install", sbomTool); err != nil {
		return nil, fmt.Errorf("installing the bill-of-materials tool: %w", err)
	}
	var names []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		fmt.Fprintf(progress, "release: %s %s\n", version, p)
		base := fmt.Sprintf("provision_%s_%s_%s", version, goos, goarch)
		exe := "provision"
		if goos == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(work, base, exe)
		env := []string{"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + goarch, "GOFLAGS=-buildvcs=true"}
		if err := goCmd(ctx, root, env, "build", "-trimpath", "-buildvcs=true",
			"-ldflags", "-s -w -buildid= -X main.version="+version, "-o", bin, "./cmd/provision"); err != nil {
			return nil, fmt.Errorf("building for %s: %w", p, err)
		}
		content, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		entries := []entry{{exe, 0o755, content}, {"README.md", 0o644, readme}, {filepath.Base(script), 0o755, step}}
		archive := base + ".tar.gz"
		write := writeTarGz
		if goos == "windows" {
			archive, write = base+".zip", writeZip
		}
		if err := write(filepath.Join(out, archive), entries, epoch); err != nil {
			return nil, err
		}
		sbom := base + ".cdx.json"
		if err := run(ctx, root, env, filepath.Join(work, "cyclonedx-gomod"), "app", "-json", "-noserial", "-notimestamp",
			"-main", "cmd/provision", "-output", filepath.Join(out, sbom), "."); err != nil {
			return nil, fmt.Errorf("the bill of materials for %s: %w", p, err)
		}
		names = append(names, archive, sbom)
	}
	slices.Sort(names)
	var sums bytes.Buffer
	var files []file
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), name)
		files = append(files, file{name, int64(len(b))})
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), sums.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return append(files, file{"SHA256SUMS", int64(sums.Len())}), nil
}

// sourceDate is the time every archive entry carries: SOURCE_DATE_EPOCH
// when set (reproducible-builds.org's convention), else the time of the
// commit the release is built from.
func sourceDate(ctx context.Context, root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%ct")
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			return time.Time{}, fmt.Errorf("reading the commit's time (git log): %w; set SOURCE_DATE_EPOCH outside a git clone", err)
		}
		s = strings.TrimSpace(string(b))
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// goCmd runs the go command in dir with env added.
func goCmd(ctx context.Context, dir string, env []string, args ...string) error {
	return run(ctx, dir, env, "go", args...)
}

// run runs a program in dir with env added, its output shown only when it
// fails.
func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return nil
}

// entry is one file of an archive.
type entry struct {
	name string
	mode int64
	data []byte
}

// writeTarGz writes entries to a .tar.gz, each with mtime at, owned by
// root, in the order given.
func writeTarGz(path string, entries []entry, at time.Time) error {
	var b bytes.Buffer
	gz, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: at, Typeflag: tar.TypeReg,
			Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// writeZip writes entries to a .zip, each with mtime at, in the order
// given.
func writeZip(path string, entries []entry, at time.Time) error {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: at}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(e.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
