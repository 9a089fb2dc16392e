package envelope

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KeySize is the size of every key: AES-256.
const KeySize = 32

var (
	// ErrUnknownKey: the value was wrapped by a key the keyring does not hold.
	ErrUnknownKey = errors.New("the keyring has no such key")
	// ErrOpen: the value does not decrypt under its key and context (a wrong key, a value
	// moved to another row, or damaged bytes).
	ErrOpen = errors.New("the value does not decrypt")
)

// Sealed is a value as it is stored.
type Sealed struct {
	// KeyID names the key-encryption key that wrapped DataKey.
	KeyID string
	// DataKey is the value's data key, encrypted by KeyID: nonce, then AES-256-GCM output.
	DataKey []byte
	// Ciphertext is the value encrypted by the data key: nonce, then AES-256-GCM output.
	Ciphertext []byte
}

// Keyring holds the operator's key-encryption keys: the primary, which seals and rewraps, and
// older ones, which only open what they sealed. Safe for concurrent use; immutable.
type Keyring struct {
	primary string
	keys    map[string]cipher.AEAD
	ids     []string
}

// Parse reads a keyring: entries "ID:KEY" separated by newlines or commas, KEY the standard
// base64 of 32 random bytes, ID 1 to 64 letters, digits, '.', '_' or '-'. The first entry is the
// primary key. Blank lines and lines starting with '#' are ignored. Errors name the entry, never
// a key.
func Parse(text string) (*Keyring, error) {
	k := &Keyring{keys: map[string]cipher.AEAD{}}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, entry := range strings.Split(line, ",") {
			n++
			if err := k.add(n, strings.TrimSpace(entry)); err != nil {
				return nil, err
			}
		}
	}
	if len(k.ids) == 0 {
		return nil, errors.New("keyring: no keys; an entry is ID:KEY, KEY the base64 of 32 random bytes")
	}
	k.primary = k.ids[0]
	return k, nil
}

func (k *Keyring) add(n int, entry string) error {
	id, encoded, ok := strings.Cut(entry, ":")
	if !ok {
		return fmt.Errorf("keyring: entry %d is not ID:KEY", n)
	}
	if err := validID(id); err != nil {
		return fmt.Errorf("keyring: entry %d: %w", n, err)
	}
	if _, dup := k.keys[id]; dup {
		return fmt.Errorf("keyring: key id %q appears twice", id)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil || len(key) != KeySize {
		return fmt.Errorf("keyring: key %q is not the base64 of %d bytes", id, KeySize)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return fmt.Errorf("keyring: key %q: %w", id, err)
	}
	k.keys[id] = aead
	k.ids = append(k.ids, id)
	return nil
}

func validID(id string) error {
	if id == "" || len(id) > 64 {
		return errors.New("a key id is 1 to 64 characters")
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("key id %q: only letters, digits, '.', '_' and '-'", id)
		}
	}
	return nil
}

// NewEntry returns a keyring entry "ID:KEY" with a new random key, for a key file.
func NewEntry(id string) (string, error) {
	if err := validID(id); err != nil {
		return "", err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return id + ":" + base64.StdEncoding.EncodeToString(key), nil
}

// Primary is the id of the key that seals new values and rewraps old ones.
func (k *Keyring) Primary() string { return k.primary }

// IDs are the keyring's key ids, the primary first.
func (k *Keyring) IDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plaintext under a new data key, wrapped by the primary key, both bound to
// context.
func (k *Keyring) Seal(plaintext, context []byte) (Sealed, error) {
	dataKey := make([]byte, KeySize)
	if _, err := rand.Read(dataKey); err != nil {
		return Sealed{}, fmt.Errorf("seal: %w", err)
	}
	data, err := newAEAD(dataKey)
	if err != nil {
		return Sealed{}, fmt.Errorf("seal: %w", err)
	}
	ciphertext, err := seal(data, plaintext, valueAAD(context))
	if err != nil {
		return Sealed{}, fmt.Errorf("seal: %w", err)
	}
	wrapped, err := seal(k.keys[k.primary], dataKey, keyAAD(k.primary, context))
	if err != nil {
		return Sealed{}, fmt.Errorf("seal: %w", err)
	}
	return Sealed{KeyID: k.primary, DataKey: wrapped, Ciphertext: ciphertext}, nil
}

// Open decrypts a sealed value bound to context.
func (k *Keyring) Open(s Sealed, context []byte) ([]byte, error) {
	dataKey, err := k.unwrap(s, context)
	if err != nil {
		return nil, err
	}
	data, err := newAEAD(dataKey)
	if err != nil {
		return nil, err
	}
	plaintext, err := open(data, s.Ciphertext, valueAAD(context))
	if err != nil {
		return nil, fmt.Errorf("open the value: %w", ErrOpen)
	}
	return plaintext, nil
}

// Rewrap returns s with its data key wrapped by the primary key; the ciphertext is unchanged.
// A value already under the primary key comes back as it is.
func (k *Keyring) Rewrap(s Sealed, context []byte) (Sealed, error) {
	if s.KeyID == k.primary {
		return s, nil
	}
	dataKey, err := k.unwrap(s, context)
	if err != nil {
		return Sealed{}, err
	}
	wrapped, err := seal(k.keys[k.primary], dataKey, keyAAD(k.primary, context))
	if err != nil {
		return Sealed{}, fmt.Errorf("rewrap: %w", err)
	}
	return Sealed{KeyID: k.primary, DataKey: wrapped, Ciphertext: s.Ciphertext}, nil
}

func (k *Keyring) unwrap(s Sealed, context []byte) ([]byte, error) {
	kek, ok := k.keys[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("key %q: %w", s.KeyID, ErrUnknownKey)
	}
	dataKey, err := open(kek, s.DataKey, keyAAD(s.KeyID, context))
	if err != nil || len(dataKey) != KeySize {
		return nil, fmt.Errorf("unwrap the data key with key %q: %w", s.KeyID, ErrOpen)
	}
	return dataKey, nil
}

// The additional data binds a data key to the key that wraps it and to its context, and a value
// to its context; the two kinds are told apart so one can never stand for the other. Lengths
// prefix every part, so no two different contexts give the same bytes.
func valueAAD(context []byte) []byte { return frame("wfhost/secret-value", "", context) }

func keyAAD(keyID string, context []byte) []byte { return frame("wfhost/data-key", keyID, context) }

func frame(kind, keyID string, context []byte) []byte {
	var b []byte
	for _, part := range [][]byte{[]byte(kind), []byte(keyID), context} {
		b = strconv.AppendInt(b, int64(len(part)), 10)
		b = append(append(b, ':'), part...)
	}
	return b
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts with a random nonce (a fresh data key per value, and rewraps far below GCM's
// 2^32 messages per key) and puts the nonce first.
func seal(aead cipher.AEAD, plaintext, aad []byte) ([]byte, error) {
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plaintext, aad), nil
}

func open(aead cipher.AEAD, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrOpen
	}
	n := aead.NonceSize()
	return aead.Open(nil, sealed[:n], sealed[n:], aad)
}
