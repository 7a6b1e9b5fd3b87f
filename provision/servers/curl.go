package servers

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Curl sends one request around provision, as a person would with curl
// (a JSON body; header is name, value, ..., a pair with an empty value
// left out, Host the request's host), and returns the answer's status and
// body, whatever they are; a request that gets no answer fails t. The
// tests of every package reach their servers by hand with it.
func Curl(t testing.TB, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		switch name, value := header[i], header[i+1]; {
		case value == "":
		case name == "Host":
			req.Host = value
		default:
			req.Header.Set(name, value)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
