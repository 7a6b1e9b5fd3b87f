package parallel

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAll: the read that fails first is the error, and it cancels
// the others, which do not wait out their own time.
func TestAll(t *testing.T) {
	refused := errors.New("403 refused")
	start := time.Now()
	err := All(context.Background(),
		func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Second):
				return errors.New("slow")
			}
		},
		func(context.Context) error { return refused })
	if err != refused || time.Since(start) > 5*time.Second {
		t.Errorf("%v after %s, want the refusal at once", err, time.Since(start))
	}
	if err := All(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Error(err)
	}
}
