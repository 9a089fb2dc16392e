package envelope_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/internal/envelope"
)

func keyring(t *testing.T, ids ...string) (*envelope.Keyring, []string) {
	t.Helper()
	var entries []string
	for _, id := range ids {
		e, err := envelope.NewEntry(id)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	k, err := envelope.Parse("# a comment\n" + strings.Join(entries, "\n") + "\n")
	if err != nil {
		t.Fatal(err)
	}
	return k, entries
}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	k, _ := keyring(t, "k1")
	ctx := []byte("tenant-a/stripe")
	plain := []byte("sk_live_4f9a0c27d1e6b835")
	a, err := k.Seal(plain, ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(plain, ctx)
	if a.KeyID != "k1" || bytes.Contains(a.Ciphertext, plain) || bytes.Contains(a.DataKey, plain) {
		t.Fatalf("sealed: %+v", a)
	}
	if bytes.Equal(a.Ciphertext, b.Ciphertext) || bytes.Equal(a.DataKey, b.DataKey) {
		t.Fatal("two seals of one value are equal: the data key or nonce is not fresh")
	}
	got, err := k.Open(a, ctx)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %q %v", got, err)
	}
	// Bound to its context: a value copied to another tenant's or name's row does not open.
	if _, err := k.Open(a, []byte("tenant-b/stripe")); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("open in another context: %v", err)
	}
	// The data key of one value does not open another's ciphertext.
	if _, err := k.Open(envelope.Sealed{KeyID: a.KeyID, DataKey: b.DataKey, Ciphertext: a.Ciphertext}, ctx); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("a ciphertext under another value's data key: %v", err)
	}
	tampered := a
	tampered.Ciphertext = append([]byte(nil), a.Ciphertext...)
	tampered.Ciphertext[len(tampered.Ciphertext)-1] ^= 1
	if _, err := k.Open(tampered, ctx); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("tampered: %v", err)
	}
	short := a
	short.DataKey = a.DataKey[:5]
	if _, err := k.Open(short, ctx); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("truncated data key: %v", err)
	}
	other, _ := keyring(t, "k2")
	if _, err := other.Open(a, ctx); !errors.Is(err, envelope.ErrUnknownKey) {
		t.Fatalf("another keyring: %v", err)
	}
	sameID, _ := keyring(t, "k1")
	if _, err := sameID.Open(a, ctx); !errors.Is(err, envelope.ErrOpen) {
		t.Fatalf("another key under the same id: %v", err)
	}
}

// TestRotation: a new primary key rewraps old values' data keys and leaves their ciphertext;
// old keys still open what they sealed until then, and a keyring without them does not.
func TestRotation(t *testing.T) {
	t.Parallel()
	old, entries := keyring(t, "k1")
	ctx := []byte("t/n")
	sealed, _ := old.Seal([]byte("a value of some length"), ctx)
	k2, _ := envelope.NewEntry("k2")
	rotated, err := envelope.Parse(k2 + "," + entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Primary() != "k2" || strings.Join(rotated.IDs(), ",") != "k2,k1" {
		t.Fatalf("primary %s, ids %v", rotated.Primary(), rotated.IDs())
	}
	if v, err := rotated.Open(sealed, ctx); err != nil || string(v) != "a value of some length" {
		t.Fatalf("an older key opens its values: %q %v", v, err)
	}
	re, err := rotated.Rewrap(sealed, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if re.KeyID != "k2" || !bytes.Equal(re.Ciphertext, sealed.Ciphertext) || bytes.Equal(re.DataKey, sealed.DataKey) {
		t.Fatalf("rewrapped: %+v from %+v", re, sealed)
	}
	if again, _ := rotated.Rewrap(re, ctx); !bytes.Equal(again.DataKey, re.DataKey) {
		t.Fatal("rewrapping a value under the primary changed it")
	}
	onlyNew, _ := envelope.Parse(k2)
	if v, err := onlyNew.Open(re, ctx); err != nil || string(v) != "a value of some length" {
		t.Fatalf("after the rewrap the new key alone opens it: %q %v", v, err)
	}
	if _, err := onlyNew.Rewrap(sealed, ctx); !errors.Is(err, envelope.ErrUnknownKey) {
		t.Fatalf("rewrap without the old key: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	good, _ := envelope.NewEntry("k1")
	secretPart := strings.SplitN(good, ":", 2)[1]
	for text, want := range map[string]string{
		"":                                 "no keys",
		"# only a comment":                 "no keys",
		"k1":                               "entry 1 is not ID:KEY",
		"k1:" + secretPart[:20]:            `key "k1" is not the base64 of 32 bytes`,
		"k1:bm90IDMyIGJ5dGVz":              `key "k1" is not the base64 of 32 bytes`,
		"bad id:" + secretPart:             `key id "bad id"`,
		good + "\n" + good:                 `key id "k1" appears twice`,
		":" + secretPart:                   "1 to 64 characters",
		strings.Repeat("x", 65) + ":" + "": "1 to 64 characters",
	} {
		_, err := envelope.Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%.30q): %v, want %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), secretPart[:10]) {
			t.Errorf("an error shows key material: %v", err)
		}
	}
	if _, err := envelope.NewEntry("no spaces"); err == nil {
		t.Error("NewEntry took an invalid id")
	}
}
