// Command zipfn packages a Lambda custom-runtime binary as a deployment zip:
// the zip holds a single file named "bootstrap" with mode 0755, whatever the
// input file is called.
//
// Usage:
//
//	go run ./infra/stack/zipfn OUT.zip PATH/TO/bootstrap
//
// The output is reproducible: the entry's timestamp is fixed, so the same
// binary always yields the same zip bytes. The zip is written to a temporary
// file next to OUT.zip and renamed into place.
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// fixedTime is the modification time stored for the entry (reproducible builds).
var fixedTime = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zipfn OUT.zip PATH/TO/bootstrap")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "zipfn:", err)
		os.Exit(1)
	}
}

func run(out, in string) (err error) {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", in)
	}

	dir := filepath.Dir(out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()

	zw := zip.NewWriter(tmp)
	hdr := &zip.FileHeader{
		Name:     "bootstrap",
		Method:   zip.Deflate,
		Modified: fixedTime,
	}
	hdr.SetMode(0o755) // also marks the entry as created on Unix, so the mode is honoured
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	n, err := io.Copy(w, src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	if n != fi.Size() {
		return fmt.Errorf("%s changed while being read (%d of %d bytes)", in, n, fi.Size())
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
