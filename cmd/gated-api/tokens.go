package main

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// entry is one accepted token, kept as the SHA-256 of the token.
type entry struct {
	identity string
	sum      [sha256.Size]byte
}

// tokenSet holds the accepted tokens.
type tokenSet struct {
	entries []entry
}

// parseTokens reads lines "<identity> sha256:<hex>"; blank lines and lines
// starting with # are skipped. source names the input in errors.
func parseTokens(r io.Reader, source string) (*tokenSet, error) {
	ts := &tokenSet{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e, err := parseEntry(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", source, line, err)
		}
		ts.entries = append(ts.entries, e)
	}
	return ts, sc.Err()
}

func parseEntry(text string) (entry, error) {
	fields := strings.Fields(text)
	if len(fields) != 2 || !strings.HasPrefix(fields[1], "sha256:") {
		return entry{}, fmt.Errorf(`want "<identity> sha256:<hex>", as "gated-api hash-token" prints`)
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(fields[1], "sha256:"))
	if err != nil || len(raw) != sha256.Size {
		return entry{}, fmt.Errorf("the hash is not 64 hex digits")
	}
	e := entry{identity: fields[0]}
	copy(e.sum[:], raw)
	return e, nil
}

// lookup returns the identity of a token. Every entry is compared, in
// constant time, whatever matches.
func (ts *tokenSet) lookup(token string) (string, bool) {
	if token == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(token))
	identity, found := "", 0
	for _, e := range ts.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			identity, found = e.identity, 1
		}
	}
	return identity, found == 1
}

// hashLine is the token file line for a token.
func hashLine(identity, token string) string {
	sum := sha256.Sum256([]byte(token))
	return identity + " sha256:" + hex.EncodeToString(sum[:])
}
