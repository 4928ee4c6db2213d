package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"golang.org/x/sync/errgroup"

	"github.com/agentnode/agentnode/internal/backoff"
	"github.com/agentnode/agentnode/internal/relayclient"
	"github.com/agentnode/agentnode/relay"
)

// maxImportLine is the longest line import reads (longer ones are
// reported and skipped, never held whole): twice the relay's default
// largest message, which refuses anything bigger anyway.
const maxImportLine = 1 << 20

// importJob is one line's event on its way to the publisher.
type importJob struct {
	line int
	evt  *nostr.Event
}

// importResult is what became of one line: err nil is stored.
type importResult struct {
	line int
	id   string
	err  error
}

// importStream reads in line by line and publishes with parallel
// workers; at most parallel events and results are in flight, so memory
// does not grow with the input. Each refusal is printed as it comes.
func (m *Main) importStream(ctx context.Context, in io.Reader, pub publisher, parallel int) error {
	jobs := make(chan importJob, parallel)
	results := make(chan importResult, parallel)
	sum := &importSummary{refused: map[string]int{}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { defer close(jobs); return m.readEvents(gctx, in, jobs, results) })
	for range parallel {
		g.Go(func() error { return publishJobs(gctx, pub, jobs, results) })
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait(); close(results) }() // results closes once nothing can send
	m.tally(results, sum)
	if err := <-done; err != nil {
		return fmt.Errorf("import: %w (after line %d)", err, sum.lines)
	}
	return sum.report(m.Stderr)
}

// readEvents parses each line into a job; an unreadable line becomes a
// result at once.
func (m *Main) readEvents(ctx context.Context, in io.Reader, jobs chan<- importJob, results chan<- importResult) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(r, maxImportLine)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && !errors.Is(err, errLineTooLong):
			return fmt.Errorf("read line %d: %w", n, err) // the input failed, not the line
		}
		var job importJob
		if err == nil {
			job, err = parseEventLine(n, line)
		}
		switch {
		case err != nil:
			results <- importResult{line: n, err: err} // tally drains results until the workers end
		case job.evt != nil: // else a blank line
			select {
			case <-ctx.Done():
				return ctx.Err()
			case jobs <- job:
			}
		}
	}
}

// errUnreadable marks a line that is not an event.
var errUnreadable = errors.New("unreadable")

// errLineTooLong: a line longer than maxImportLine.
var errLineTooLong = fmt.Errorf("%w: line longer than %d bytes", errUnreadable, maxImportLine)

// parseEventLine decodes one JSONL line (a blank line is no job).
func parseEventLine(n int, line []byte) (importJob, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return importJob{}, nil
	}
	evt := &nostr.Event{}
	if err := json.Unmarshal(line, evt); err != nil {
		return importJob{}, fmt.Errorf("%w: not a JSON event: %v", errUnreadable, err)
	}
	return importJob{line: n, evt: evt}, nil
}

// readLine returns the next line without its newline; a line longer than
// max is skipped to its end and reported as errLineTooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		part, err := r.ReadSlice('\n')
		if !tooLong && len(buf)+len(part) > max+1 {
			tooLong, buf = true, nil
		}
		if !tooLong {
			buf = append(buf, part...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(buf) > 0 || tooLong):
			err = nil
		case err != nil:
			return nil, err
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}

// publishJobs publishes jobs until the channel closes; a failure of the
// target itself (not a refusal) stops the import.
func publishJobs(ctx context.Context, pub publisher, jobs <-chan importJob, results chan<- importResult) error {
	for job := range jobs {
		err := pub(ctx, job.evt)
		if _, refusal := relay.IsRefusal(err); err != nil && !refusal && !strings.HasPrefix(err.Error(), "error: ") {
			return fmt.Errorf("line %d: %w", job.line, err) // the target failed: stop
		}
		select {
		case results <- importResult{line: job.line, id: job.evt.ID, err: err}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// tally prints each failed line and counts every result.
func (m *Main) tally(results <-chan importResult, sum *importSummary) {
	for res := range results {
		sum.lines++
		switch {
		case res.err == nil:
			sum.stored++
		case errors.Is(res.err, errUnreadable):
			sum.unreadable++
			fmt.Fprintf(m.Stderr, "line %d: %v\n", res.line, res.err)
		default:
			prefix, ok := relay.IsRefusal(res.err)
			if !ok {
				prefix = "error"
			}
			sum.refused[prefix]++
			fmt.Fprintf(m.Stderr, "line %d: %s: %v\n", res.line, res.id, res.err)
		}
	}
}

// dialPublisher publishes over a websocket to a running node, retrying
// "rate-limited:" refusals after a backoff.
func dialPublisher(ctx context.Context, url string) (publisher, func(), error) {
	conn, err := relayclient.Dial(ctx, url, relayclient.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	pub := func(ctx context.Context, evt *nostr.Event) error {
		for try := 0; ; try++ {
			err := conn.Publish(ctx, evt)
			var refused *relayclient.RefusedError
			if !errors.As(err, &refused) {
				return err
			}
			if !strings.HasPrefix(refused.Reason, "rate-limited:") || try >= 8 {
				return errors.New(refused.Reason)
			}
			if !backoff.Sleep(ctx, backoff.Default.Delay(try)) {
				return ctx.Err()
			}
		}
	}
	return pub, func() { conn.Close() }, nil
}
