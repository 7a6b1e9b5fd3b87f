package adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"regexp"
	"syscall"
	"time"
)

// Deadlines bound every network call a backend makes, so that a stalled,
// refusing or failing server always ends the command.
type Deadlines struct {
	// Request is the deadline of one attempt of one request.
	Request time.Duration
	// Attempts is how often a call that may be repeated is tried: reads,
	// and writes that are idempotent.
	Attempts int
	// Backoff is the pause before the second attempt; it doubles.
	Backoff time.Duration
}

// DefaultDeadlines end a stalled read in 10 s (a stall is not retried: the
// server got the request and did not answer) and retry a refused or reset
// connection or a 5xx answer twice, 0.25 s and 0.5 s later.
var DefaultDeadlines = Deadlines{Request: 10 * time.Second, Attempts: 3, Backoff: 250 * time.Millisecond}

// StatusError is a server's answer outside 2xx.
type StatusError struct {
	Code    int
	Message string // the server's own reason, quoted
	// Leaderless is an answer that the cluster has no leader (Consul) or
	// master (Elasticsearch) to act on the request: an election is under
	// way, nothing was done, and the same request may be sent again,
	// idempotent or not (see Deadlines.Call).
	Leaderless bool
	// SlowDown is an answer that the server limits its request rate (a
	// 429, or Consul's 503 "rate limit exceeded"): the request was not
	// acted on, and is sent again, idempotent or not, once the server
	// allows it (see Deadlines.Call).
	SlowDown bool
	// RetryAfter is how long the answer's Retry-After header asked to
	// wait; 0 when it gave none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string { return e.Message }

// Refused reports whether err is the server's refusal of a request: an
// answer in the 4xx range. A re-run sends the same request and gets the
// same answer, so it does not converge until the declaration (or the live
// object) changes. Transport errors, timeouts and 5xx answers may.
func Refused(err error) (*StatusError, bool) {
	var se *StatusError
	if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 {
		return se, true
	}
	return nil, false
}

// errStalled is the error of an attempt that got no answer in time.
var errStalled = errors.New("no answer")

// Unanswered reports whether err is a request that got no answer at all:
// a stall, or a connection refused, reset or closed (not an answer, of
// any status).
func Unanswered(err error) bool {
	var se *StatusError
	if err == nil || errors.As(err, &se) {
		return false
	}
	return errors.Is(err, errStalled) || transient(err)
}

// maxSlowDown is the longest pause before the next attempt of a request
// a server refused for its rate: a Retry-After longer than this is cut
// to it, so that a server's limit lifted early is seen.
const maxSlowDown = 10 * time.Second

// Call runs attempt with the per-request deadline. With retry, a refused
// or reset connection and a 5xx answer are tried again after a pause, up
// to Attempts times (a refused connection also without retry: nothing was
// sent); a stall, another answer and the cancellation of ctx
// are final. The error of a stall says how long was waited. Whatever
// retry says, an answer that the cluster has no leader (an election under
// way: nothing was done) is tried again, the pauses growing to a second,
// until the request's deadline has passed since the first attempt: an
// election of a second or a few is waited out, not reported. An answer
// that the server limits its rate (StatusError.SlowDown) is tried again,
// idempotent or not, for as long as the command runs (its -timeout, an
// interrupt), after the pause its Retry-After asks for, else one that
// doubles from Backoff to 10 s with jitter (so that the requests a limit
// refused together do not come back together); each pause is told to
// ctx's Waiting function. Such attempts are not counted in Attempts.
func (d Deadlines) Call(ctx context.Context, retry bool, attempt func(context.Context) error) error {
	pause, start := d.Backoff, time.Now()
	slow := d.Backoff  // the next pause after a slow-down, before jitter
	limit := d.Request // of this attempt
	for i := 1; ; i++ {
		actx, cancel := context.WithTimeout(ctx, limit)
		err := attempt(actx)
		stalled := err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			return nil
		case stalled:
			return fmt.Errorf("%w within %s (the request timeout)", errStalled, limit.Round(time.Millisecond))
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case SlowDown(err):
			if err := d.pause(ctx, err, &slow); err != nil {
				return err
			}
			// Not an attempt that failed: the server asked to wait. The
			// next attempt starts afresh, its election wait and deadline
			// whole.
			i--
			start, limit = time.Now(), d.Request
			continue
		case Leaderless(err):
			// Waited out within the request's deadline, counted from the
			// first attempt: the next attempt gets what is left of it.
			pause = max(min(pause, time.Second), 50*time.Millisecond)
			limit = d.Request - time.Since(start) - pause
			if limit <= 0 || Stopping(ctx) {
				return err
			}
		case i >= d.Attempts || Stopping(ctx) || !(retry && transient(err) || neverSent(err)):
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		pause *= 2
	}
}

// Paced calls attempt until it returns anything but a slow-down, waiting
// between as Call does: for a call with deadlines of its own (taking a
// lock, which may wait for its holder for -lock-timeout).
func (d Deadlines) Paced(ctx context.Context, attempt func() error) error {
	slow := d.Backoff
	for {
		err := attempt()
		if !SlowDown(err) {
			return err
		}
		if err := d.pause(ctx, err, &slow); err != nil {
			return err
		}
	}
}

// pause waits after why, a slow-down, for the pause it asks (slow, before
// jitter, doubled for the next), and tells ctx's Waiting function; it
// returns why when the apply is stopping (also while it waits: no
// attempt follows then), and the cause of ctx's end when that comes first.
func (d Deadlines) pause(ctx context.Context, why error, slow *time.Duration) error {
	if Stopping(ctx) {
		return why
	}
	wait := slowDownPause(why, *slow)
	*slow = min(2**slow, maxSlowDown)
	waited(ctx, wait, why)
	select {
	case <-time.After(wait):
		return nil
	case <-stopOf(ctx):
		return why
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// slowDownPause is how long to wait after err, a slow-down: what its
// Retry-After asks (at most maxSlowDown), else between half of backoff
// and backoff, at random.
func slowDownPause(err error, backoff time.Duration) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, maxSlowDown)
	}
	return backoff/2 + rand.N(backoff/2+1)
}

// SlowDown reports whether err is an answer that the server limits its
// request rate (StatusError.SlowDown).
func SlowDown(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.SlowDown
}

type waitKey struct{}

// Waiting is ctx with told, which Call tells of each pause a server asked
// for (a slow-down) before it sends the request again: for the progress.
func Waiting(ctx context.Context, told func(pause time.Duration, why error)) context.Context {
	return context.WithValue(ctx, waitKey{}, told)
}

func waited(ctx context.Context, pause time.Duration, why error) {
	if told, ok := ctx.Value(waitKey{}).(func(time.Duration, error)); ok {
		told(pause, why)
	}
}

type stopKey struct{}

// Sending is the context a request of an apply is sent with: ctx's values
// without its cancellation, so that a request under way finishes within
// its deadline after an interrupt, but no new attempt of it starts.
func Sending(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), stopKey{}, ctx.Done())
}

// Stopping reports whether the apply a request belongs to was stopped:
// a request under way finishes, but is not tried again.
func Stopping(ctx context.Context) bool {
	done := stopOf(ctx)
	select {
	case <-done:
		return done != nil
	default:
		return false
	}
}

// stopOf is the channel closed when the apply ctx's request belongs to is
// stopped; nil (never ready) outside an apply.
func stopOf(ctx context.Context) <-chan struct{} {
	done, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return done
}

// neverSent reports whether err is a connection refused: the request
// never left, so any request may be sent again (to the next node of a
// cluster named by several, whose client sets the refusing one aside).
func neverSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Leaderless reports whether err is an answer that the cluster has no
// leader or master to act on the request (StatusError.Leaderless).
func Leaderless(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Leaderless
}

// transient reports whether err is worth another attempt: a connection
// that was refused, reset or closed, or a 5xx answer.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500
	}
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &op) && !op.Timeout())
}

// OrDefault is d, or DefaultDeadlines when d is the zero value (options
// that leave the deadlines out).
func (d Deadlines) OrDefault() Deadlines {
	if d == (Deadlines{}) {
		return DefaultDeadlines
	}
	return d
}

// localAddr is the local side of a connection in Go's network errors
// ("read tcp 127.0.0.1:37444->127.0.0.1:9200: ...").
var localAddr = regexp.MustCompile(`[0-9a-fA-F.:\[\]]+->`)

// WithoutLocalAddrs is an error's text less the local sides of its
// connections, which differ at every try: so that the same trouble is
// said once.
func WithoutLocalAddrs(s string) string { return localAddr.ReplaceAllString(s, "") }
