package main

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// observed is what the determinism workflow saw: outside a step the host makes all of it a
// function of the run and its journal; inside a step it is real.
type observed struct {
	Now        int64    `json:"now"`
	Elapsed    int64    `json:"elapsed"`
	MathRand   int64    `json:"mathRand"`
	CryptoRand uint64   `json:"cryptoRand"`
	MapOrder   []string `json:"mapOrder"`
	Step       struct {
		Now        int64  `json:"now"`
		CryptoRand uint64 `json:"cryptoRand"`
	} `json:"step"`
	AfterStep int64 `json:"afterStep"`
}

func init() {
	wf.Register(wf.Workflow[none, observed]{Name: "determinism", Version: "1", Run: determinism})
}

func determinism(ctx *wf.Context, _ none) (observed, error) {
	var o observed
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
	type inside struct {
		Now        int64  `json:"now"`
		CryptoRand uint64 `json:"cryptoRand"`
	}
	in, err := wf.Step(ctx, "observe", func(sc *wf.StepContext) (inside, error) {
		var b [8]byte
		_, _ = crand.Read(b[:])
		return inside{Now: time.Now().UnixNano(), CryptoRand: binary.LittleEndian.Uint64(b[:])}, nil
	})
	if err != nil {
		return o, err
	}
	o.Step.Now, o.Step.CryptoRand = in.Now, in.CryptoRand
	o.AfterStep = time.Now().UnixNano()
	return o, nil
}
