package khatru

import (
	"encoding/json"
	"testing"
)

// An EVENT frame's subscription id is JSON-escaped: a client's id holding
// quotes, backslashes, control or non-ASCII characters comes back intact
// and cannot break the frame.
func TestEventFramePrefix_escapesTheID(t *testing.T) {
	for _, id := range []string{"sub", `a"b`, `back\slash`, "tab\tnew\nline", "ünï", `"],{"x":1},["`} {
		frame := append(eventFramePrefix(id), `{}]`...)
		var got []json.RawMessage
		if err := json.Unmarshal(frame, &got); err != nil || len(got) != 3 {
			t.Fatalf("id %q: frame %s is not a 3-element array: %v", id, frame, err)
		}
		var back string
		if json.Unmarshal(got[1], &back); back != id {
			t.Errorf("id %q came back as %q", id, back)
		}
	}
}

func textFrame(n int) frame {
	return frame{opcode: 1, parts: [3][]byte{make([]byte, n)}}
}

// A stored answer fills at most half the budget and then waits for the
// writer to take the queue; an empty queue takes any frame; live frames
// use the whole budget and past it the connection is a slow consumer.
func TestOutbox_pacedAnswersLeaveRoomForLiveEvents(t *testing.T) {
	o := &outbox{}
	const budget = 1000
	for i := range 5 {
		wait, start, err := o.pushPaced(textFrame(100), budget, 0)
		if wait != nil || err != nil || start != (i == 0) {
			t.Fatalf("paced frame %d: wait %v, start %v, err %v", i, wait != nil, start, err)
		}
	}
	wait, _, _ := o.pushPaced(textFrame(100), budget, 0)
	if wait == nil {
		t.Fatal("a paced frame past half the budget was queued")
	}
	if ok, over, _ := o.push(textFrame(400), budget, 0); !ok || over {
		t.Fatal("a live frame within the budget was refused")
	}
	frames, overflow, stop := o.take()
	if len(frames) != 6 || overflow || stop {
		t.Fatalf("take: %d frames, overflow %v, stop %v", len(frames), overflow, stop)
	}
	select {
	case <-wait:
	default:
		t.Fatal("take did not wake the paced sender")
	}
	if wait, _, _ := o.pushPaced(textFrame(5000), budget, 0); wait != nil {
		t.Fatal("an empty queue refused a paced frame larger than half the budget")
	}
	if ok, over, _ := o.push(textFrame(budget), budget, 0); ok || !over {
		t.Fatal("a live frame past the budget did not make a slow consumer")
	}
	if _, _, err := o.pushPaced(textFrame(1), budget, 0); err != errOverBudget {
		t.Fatalf("paced frame after the overflow: %v, want errOverBudget", err)
	}
}

// The writer is started by the first frame of an idle connection and
// stops when it finds the queue empty; the next frame starts it again.
func TestOutbox_writerRunsOnlyWhileThereIsWork(t *testing.T) {
	o := &outbox{}
	if _, _, start := o.push(textFrame(1), 0, 0); !start {
		t.Fatal("the first frame did not start a writer")
	}
	if _, _, start := o.push(textFrame(1), 0, 0); start {
		t.Fatal("a second writer was started")
	}
	if frames, _, stop := o.take(); len(frames) != 2 || stop {
		t.Fatalf("take: %d frames, stop %v", len(frames), stop)
	}
	if _, _, stop := o.take(); !stop {
		t.Fatal("the writer was not told to stop on an empty queue")
	}
	if _, _, start := o.push(textFrame(1), 0, 0); !start {
		t.Fatal("a frame after the writer stopped did not start one")
	}
}

// Paced frames also count messages: at most half of maxFrames.
func TestOutbox_pacedAnswersCountFrames(t *testing.T) {
	o := &outbox{}
	for range 5 {
		if wait, _, _ := o.pushPaced(textFrame(1), 0, 10); wait != nil {
			t.Fatal("refused below half the frame budget")
		}
	}
	if wait, _, _ := o.pushPaced(textFrame(1), 0, 10); wait == nil {
		t.Fatal("queued past half the frame budget")
	}
}
