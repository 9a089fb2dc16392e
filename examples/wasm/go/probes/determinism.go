package probes

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// Observed is what Determinism saw: outside a step the host makes all of it a function of the
// run and its journal; inside a step it is real.
type Observed struct {
	Now        int64    `json:"now"`
	Elapsed    int64    `json:"elapsed"`
	MathRand   int64    `json:"mathRand"`
	CryptoRand uint64   `json:"cryptoRand"`
	MapOrder   []string `json:"mapOrder"`
	Step       Inside   `json:"step"`
	AfterStep  int64    `json:"afterStep"`
}

// Inside is what Determinism's step saw.
type Inside struct {
	Now        int64  `json:"now"`
	CryptoRand uint64 `json:"cryptoRand"`
}

// Determinism reports the clock, random numbers and map order it sees outside a step and
// inside one.
func Determinism(ctx *wf.Context, _ struct{}) (Observed, error) {
	var o Observed
	start := time.Now()
	o.Now = start.UnixNano()
	o.MathRand = rand.Int63()
	var b [8]byte
	_, _ = crand.Read(b[:])
	o.CryptoRand = binary.LittleEndian.Uint64(b[:])
	for k := range map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8} {
		o.MapOrder = append(o.MapOrder, k)
	}
	o.Elapsed = int64(time.Since(start))
	in, err := wf.Step(ctx, "observe", func(sc *wf.StepContext) (Inside, error) {
		var b [8]byte
		_, _ = crand.Read(b[:])
		return Inside{Now: time.Now().UnixNano(), CryptoRand: binary.LittleEndian.Uint64(b[:])}, nil
	})
	if err != nil {
		return o, err
	}
	o.Step = in
	o.AfterStep = time.Now().UnixNano()
	return o, nil
}
