package schema

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is an ISO-8601 duration, P[nY][nM][nW][nD][T[nH][nM][nS]], kept
// in its calendar components so that it is applied with calendar
// arithmetic (a month back from 31 March is 3 March, as time.AddDate does).
type Duration struct {
	Years, Months, Weeks, Days int
	Hours, Minutes, Seconds    int
}

// durationUnits are the designators in the order they must appear; time
// marks the ones after "T".
var durationUnits = []struct {
	des  byte
	time bool
}{{'Y', false}, {'M', false}, {'W', false}, {'D', false}, {'H', true}, {'M', true}, {'S', true}}

// ParseDuration parses an ISO-8601 duration strictly: upper-case
// designators in order, each at most once, non-negative integers of at
// most nine digits, at least one component, and at least one time component
// after a "T". Fractions, signs and the PnnW-only restriction of ISO 8601
// are not supported (weeks may combine with other units).
func ParseDuration(s string) (Duration, error) {
	var d Duration
	if len(s) < 3 || s[0] != 'P' {
		return d, durErr(s, "must start with P and have a component")
	}
	fields := d.fields()
	rest, unit, inTime, seen := s[1:], 0, false, 0
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return d, durErr(s, "second T")
			}
			if rest = rest[1:]; rest == "" {
				return d, durErr(s, "T without a time component")
			}
			inTime, unit = true, max(unit, 4)
			continue
		}
		n, des, tail, err := durComponent(rest)
		if err != nil {
			return d, durErr(s, err.Error())
		}
		i := findUnit(des, inTime, unit)
		if i < 0 {
			return d, durErr(s, fmt.Sprintf("designator %q out of place", des))
		}
		*fields[i], unit, rest, seen = n, i+1, tail, seen+1
	}
	if seen == 0 || inTime && unit <= 4 {
		return d, durErr(s, "no component")
	}
	return d, nil
}

// durComponent reads "<digits><designator>" from the front of s.
func durComponent(s string) (int, byte, string, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	switch {
	case i == 0:
		return 0, 0, "", fmt.Errorf("expected digits at %q", s)
	case i > 9:
		return 0, 0, "", fmt.Errorf("number too long at %q", s)
	case i == len(s):
		return 0, 0, "", fmt.Errorf("number without designator at %q", s)
	}
	n, err := strconv.Atoi(s[:i])
	return n, s[i], s[i+1:], err
}

// findUnit returns the index of designator des at or after position from,
// among the date units (inTime false) or the time units.
func findUnit(des byte, inTime bool, from int) int {
	for i := from; i < len(durationUnits); i++ {
		if u := durationUnits[i]; u.des == des && u.time == inTime {
			return i
		}
	}
	return -1
}

func durErr(s, why string) error {
	return fmt.Errorf("%w: bad ISO-8601 duration %q: %s", ErrInvalidSchema, s, why)
}

func (d *Duration) fields() []*int {
	return []*int{&d.Years, &d.Months, &d.Weeks, &d.Days, &d.Hours, &d.Minutes, &d.Seconds}
}

// Before returns t minus d, with calendar arithmetic for the date part.
func (d Duration) Before(t time.Time) time.Time {
	t = t.AddDate(-d.Years, -d.Months, -(7*d.Weeks + d.Days))
	return t.Add(-d.clock())
}

// Approx returns d as a time.Duration, counting a year as 365 days and a
// month as 30 days.
func (d Duration) Approx() time.Duration {
	days := 365*d.Years + 30*d.Months + 7*d.Weeks + d.Days
	return time.Duration(days)*24*time.Hour + d.clock()
}

func (d Duration) clock() time.Duration {
	return time.Duration(d.Hours)*time.Hour + time.Duration(d.Minutes)*time.Minute +
		time.Duration(d.Seconds)*time.Second
}

// IsZero reports whether every component is zero.
func (d Duration) IsZero() bool { return d == Duration{} }

// String renders d in ISO-8601 form ("P0D" for zero).
func (d Duration) String() string {
	var b strings.Builder
	b.WriteByte('P')
	vals := []int{d.Years, d.Months, d.Weeks, d.Days, d.Hours, d.Minutes, d.Seconds}
	for i, v := range vals {
		if i == 4 && (d.Hours|d.Minutes|d.Seconds) != 0 {
			b.WriteByte('T')
		}
		if v != 0 {
			fmt.Fprintf(&b, "%d%c", v, durationUnits[i].des)
		}
	}
	if b.Len() == 1 {
		return "P0D"
	}
	return b.String()
}

// MarshalText renders d in ISO-8601 form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
