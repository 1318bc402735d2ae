package calibrate

import "encoding/json"

// ConsistencyKey is the key of a score's details under which a judge that
// voted (samples: N) records, per criterion, how its samples voted: a list
// of {"criterion": the assertion's text, "pass_votes": k, "samples": n}.
// The judge and grade packages write it; this package and the reports
// read it.
const ConsistencyKey = "self_consistency"

// Vote is how a criterion's samples voted.
type Vote struct {
	Criterion string `json:"criterion"`
	PassVotes int    `json:"pass_votes"`
	Samples   int    `json:"samples"`
}

// Agreement is the share of the samples that voted with the majority: 1
// when they were unanimous, near 0.5 when the criterion is a coin toss.
func (v Vote) Agreement() float64 {
	if v.Samples <= 0 {
		return 0
	}
	return float64(max(v.PassVotes, v.Samples-v.PassVotes)) / float64(v.Samples)
}

// Votes reads the votes a score's details hold, by criterion text; nil
// when it holds none. Details read from JSON and details made in this
// process read alike.
func Votes(details map[string]any) map[string]Vote {
	raw, ok := details[ConsistencyKey]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var vs []Vote
	if json.Unmarshal(b, &vs) != nil {
		return nil
	}
	out := make(map[string]Vote, len(vs))
	for _, v := range vs {
		out[v.Criterion] = v
	}
	return out
}
