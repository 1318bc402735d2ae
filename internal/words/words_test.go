package words

import "testing"

func TestCounted(t *testing.T) {
	for _, c := range []struct {
		n    int
		one  string
		want string
	}{
		{0, "test", "0 tests"},
		{1, "test", "1 test"},
		{2, "reply", "2 replies"},
		{2, "day", "2 days"},
		{1, "reply", "1 reply"},
	} {
		if got := Counted(c.n, c.one); got != c.want {
			t.Errorf("Counted(%d, %q) = %q, want %q", c.n, c.one, got, c.want)
		}
	}
}
