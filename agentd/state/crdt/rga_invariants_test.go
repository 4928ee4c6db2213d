package crdt

import "fmt"

// check verifies the tree and index invariants: visible counts, parent
// links, the leaf chain, and that every span is indexed at its leaf.
func (d *rga) check() error {
	var leaves []*node
	if _, err := d.checkNode(d.root, nil, &leaves); err != nil {
		return err
	}
	if leaves[0] != d.first {
		return fmt.Errorf("first leaf is not leftmost")
	}
	for i, l := range leaves {
		var want *node
		if i+1 < len(leaves) {
			want = leaves[i+1]
		}
		if l.next != want {
			return fmt.Errorf("leaf chain broken at %d", i)
		}
		for _, s := range l.spans {
			if got, ok := d.ids[s.rep].find(s.seq); !ok || d.leaves[got] != l {
				return fmt.Errorf("span %d@%s indexed at wrong leaf", s.seq, d.reps[s.rep])
			}
		}
	}
	return nil
}

func (d *rga) checkNode(n, parent *node, leaves *[]*node) (int, error) {
	if n.parent != parent {
		return 0, fmt.Errorf("bad parent link")
	}
	vis := 0
	if n.kids == nil {
		*leaves = append(*leaves, n)
		if len(n.spans) > leafMax || (len(n.spans) == 0 && n != d.root) {
			return 0, fmt.Errorf("leaf with %d spans", len(n.spans))
		}
		for i := range n.spans {
			vis += n.spans[i].visible()
		}
	}
	for _, k := range n.kids {
		v, err := d.checkNode(k, n, leaves)
		if err != nil {
			return 0, err
		}
		vis += v
	}
	if vis != n.vis {
		return 0, fmt.Errorf("node vis %d, want %d", n.vis, vis)
	}
	return vis, nil
}

// stats reports the number of spans and the tree height.
func (d *rga) stats() (spans, height int) {
	for n := d.root; n != nil; height++ {
		if n.kids == nil {
			break
		}
		n = n.kids[0]
	}
	for l := d.first; l != nil; l = l.next {
		spans += len(l.spans)
	}
	return spans, height + 1
}
