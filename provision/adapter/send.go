package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/provision-dev/provision/provision/plans"
)

// Exchange performs one HTTP request against a server: the backend's
// client, which adds the server's address and the credentials from the
// environment.
type Exchange func(*http.Request) (*http.Response, error)

// Sender sends requests to one server, as every backend does: with the
// deadlines, retried when the request is idempotent, a 404 taken for done
// when it is its goal, and any other answer outside 2xx a *StatusError in
// the server's own words (Refuse).
type Sender struct {
	Do  Exchange
	Net Deadlines
	// Refuse turns an answer outside 2xx into the error that quotes it.
	Refuse func(code int, status string, body []byte) error
}

// Send sends r, with the retry policy the plan decided for it, and
// returns the body of the answer (at most limit bytes).
func (s Sender) Send(ctx context.Context, r plans.Request, limit int64) ([]byte, error) {
	var body []byte
	err := s.Net.Call(ctx, r.Idempotent, func(ctx context.Context) error {
		var err error
		body, err = s.Once(ctx, r, limit)
		return err
	})
	return body, err
}

// Once sends r once, within ctx: for a caller that retries itself.
func (s Sender) Once(ctx context.Context, r plans.Request, limit int64) ([]byte, error) {
	body := []byte(r.Body)
	if r.Text {
		var text string
		if err := json.Unmarshal(r.Body, &text); err != nil {
			return nil, fmt.Errorf("the body of %s %s is no JSON string: %w", r.Method, r.Path, err)
		}
		body = []byte(text)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.Path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := s.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNotFound && r.GoneOK:
		return nil, nil // already gone (a retry after a lost answer): the goal
	case resp.StatusCode/100 != 2:
		return nil, slowDown(s.Refuse(resp.StatusCode, resp.Status, answer), resp)
	}
	return answer, nil
}

// slowDown marks err, a refusal of resp, as a slow-down when resp is a
// 429 Too Many Requests (RFC 6585), and takes its Retry-After (seconds, or
// an HTTP date: RFC 9110, section 10.2.3) when it is one.
func slowDown(err error, resp *http.Response) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	se.SlowDown = se.SlowDown || resp.StatusCode == http.StatusTooManyRequests
	if se.SlowDown {
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return err
}

// retryAfter is the pause a Retry-After value asks for, at now; 0 when
// there is none or it cannot be read.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
