package schema

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// ReadConfined reads a file the specs name or hold, confined as file()
// is: a regular file reached inside dir (a symbolic link that resolves
// outside it is refused), of UTF-8 text, of at most MaxStringBytes. A
// device, a FIFO or a /proc file (a link to /proc/self/environ, say) is
// refused before it is read. The error names the path, never a byte of
// what the file holds, so that no diagnostic prints a file that is not a
// spec.
func ReadConfined(path, dir string) ([]byte, error) {
	real, err := Confined(path, dir)
	if err != nil {
		return nil, err
	}
	b, err := readBounded(real, path)
	if err == nil && !utf8.Valid(b) {
		return nil, fmt.Errorf("%q is not UTF-8 text", path)
	}
	return b, err
}

// Confined checks, without reading it, that the file at path is one
// ReadConfined reads, and returns where it really is.
func Confined(path, dir string) (string, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", fmt.Errorf("the directory of %q cannot be read: %v", path, unwrapPath(err))
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%q cannot be read: %v", path, unwrapPath(err))
	}
	if real, err = filepath.Abs(real); err != nil || !under(root, real) {
		return "", fmt.Errorf("%q is outside %s, or a symbolic link to outside it; provision reads only files inside it", path, dir)
	}
	return real, regular(real, path)
}

// regular checks that the file at real (named name) is a regular file
// of at most MaxStringBytes: a device, a FIFO or a /proc file is refused
// before it is read.
func regular(real, name string) error {
	info, err := os.Stat(real)
	switch {
	case err != nil:
		return fmt.Errorf("%q cannot be read: %v", name, unwrapPath(err))
	case info.IsDir():
		return fmt.Errorf("%q is a directory, not a file", name)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%q is not a regular file (%s); provision reads only regular files", name, info.Mode().Type())
	case info.Size() > MaxStringBytes:
		return fmt.Errorf("%q holds %d bytes, more than one load reads (MaxStringBytes, %d MiB)", name, info.Size(), MaxStringBytes>>20)
	}
	return nil
}

// readBounded reads the file at real (named name), which regular
// vouched for, and no more than MaxStringBytes of it, should it grow.
func readBounded(real, name string) ([]byte, error) {
	f, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("%q cannot be read: %v", name, unwrapPath(err))
	}
	defer f.Close()
	// Read into a buffer of the file's size, as os.ReadFile does (a
	// growing one holds half again as much: 38 MB for 26 MB of specs).
	var b bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() <= MaxStringBytes {
		b.Grow(int(fi.Size()) + bytes.MinRead)
	}
	_, err = b.ReadFrom(io.LimitReader(f, MaxStringBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q cannot be read: %v", name, unwrapPath(err))
	case b.Len() > MaxStringBytes:
		return nil, fmt.Errorf("%q holds more than one load reads (MaxStringBytes, %d MiB)", name, MaxStringBytes>>20)
	}
	return b.Bytes(), nil
}
