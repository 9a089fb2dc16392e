package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// startBodyOf is a start request whose input is an object of n fields.
func startBodyOf(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"input":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":{"name":"value %d","n":%d.5,"tags":["a","b"]}`, i, i, i)
	}
	b.WriteString(`},"idempotencyKey":"k-1","retentionDays":30}`)
	return []byte(b.String())
}

// BenchmarkDecodeBody compares the strict reading of a start request with encoding/json's
// alone, for the RATIONALE's cost of strictness.
func BenchmarkDecodeBody(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		body := startBodyOf(n)
		b.Run(fmt.Sprintf("strict/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v startBody
				if err := decodeStrict(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("encoding-json/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v startBody
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
