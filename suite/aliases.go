package suite

import (
	"fmt"

	"go.yaml.in/yaml/v4"
)

// YAML aliases let a small file stand for a huge one: ten anchors that
// each repeat the previous one ten times expand to ten billion values (the
// "billion laughs"). The decoder walks aliases as if they were written out,
// so before it does, checkAliases counts what the document expands to,
// with each anchor counted once, and refuses a document whose aliases more
// than multiply it.

// aliasBudget is how much a document's aliases may add to it, in units of
// one value or 64 bytes of text, whichever is more: at least
// minAliasBudget (about 6 MB), and more for big files that reuse anchors
// (defaults merged into every test). Counting text, not only values, keeps
// a long string repeated by reference from costing gigabytes.
const (
	minAliasBudget    = 100_000
	aliasBudgetFactor = 10
	unitBytes         = 64
)

// checkAliases reports, at the alias to blame, a document whose aliases
// expand it beyond the budget.
func (d *decoder) checkAliases(root *yaml.Node) bool {
	c := &aliasCounter{size: map[*yaml.Node]int{}, cap: 1 << 40}
	real := c.nodes(root)
	budget := real + max(minAliasBudget, aliasBudgetFactor*real)
	c.cap = budget + 1
	if total := c.expanded(root); total <= budget {
		return true
	}
	worst, worstSize := (*yaml.Node)(nil), 0
	c.eachAlias(root, func(a *yaml.Node) {
		if s := c.expanded(a.Alias); s >= worstSize || worst == nil { // ties: the later, where it is used
			worst, worstSize = a, s
		}
	})
	at := root
	if worst != nil {
		at = worst
	}
	what := fmt.Sprintf("the alias *%s expands to more than %s", at.Value, units(budget))
	if worstSize <= budget {
		what = fmt.Sprintf("the file's aliases together expand to more than %s (the biggest, *%s, to %s)", units(budget), at.Value, units(worstSize))
	}
	d.fail(at, "%s: nested aliases that multiply like this (a \"billion laughs\") are refused; write the repeated values out, or nest the aliases less", what)
	return false
}

type aliasCounter struct {
	size map[*yaml.Node]int // expanded size of each node, once computed
	busy map[*yaml.Node]bool
	cap  int // sizes saturate here, so counting never overflows
}

// weight is what one node costs by itself: one value, and its text.
func weight(n *yaml.Node) int {
	return 1 + len(n.Value)/unitBytes
}

// nodes weighs the nodes written in the document, not following aliases.
func (c *aliasCounter) nodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	total := weight(n)
	for _, k := range n.Content {
		total += c.nodes(k)
	}
	return total
}

// expanded is how many values n stands for once its aliases are written
// out; each node is counted once, so this takes time in the document's
// size, not in its expansion.
func (c *aliasCounter) expanded(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := c.size[n]; ok {
		return s
	}
	if c.busy == nil {
		c.busy = map[*yaml.Node]bool{}
	}
	if c.busy[n] {
		return 1 // an anchor inside itself; the YAML parser refuses these
	}
	c.busy[n] = true
	defer delete(c.busy, n)
	total := weight(n)
	if n.Kind == yaml.AliasNode {
		total = c.expanded(n.Alias)
	} else {
		for _, k := range n.Content {
			total = min(c.cap, total+c.expanded(k))
		}
	}
	c.size[n] = total
	return total
}

// eachAlias calls f on every alias written in the document.
func (c *aliasCounter) eachAlias(n *yaml.Node, f func(*yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		f(n)
		return
	}
	for _, k := range n.Content {
		c.eachAlias(k, f)
	}
}

// units says how big an expansion is: its values, or its text when that is
// the larger.
func units(n int) string {
	return fmt.Sprintf("%d values (or %d KB of text)", n, n*unitBytes/1024)
}
