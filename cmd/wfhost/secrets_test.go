package main

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// flagContext is a cli context with the run command's store and key flags set to values.
func flagContext(t *testing.T, values map[string]string) *cli.Context {
	t.Helper()
	set := flag.NewFlagSet("run", flag.ContinueOnError)
	for _, f := range append(append(dbFlags(), dataDirFlag()), secretKeyFlags()...) {
		if err := f.Apply(set); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range values {
		if err := set.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return cli.NewContext(newApp(), set, nil)
}

// TestSecretKeysWithoutAKey: the embedded store gets a key file of its own, readable by the
// daemon's user only and kept across starts; Postgres gets none (secrets disabled).
func TestSecretKeysWithoutAKey(t *testing.T) {
	dir := t.TempDir()
	c := flagContext(t, map[string]string{"data-dir": dir})
	first, source, err := secretKeys(c)
	if err != nil || first == nil || source != filepath.Join(dir, secretKeyFile) {
		t.Fatalf("embedded, no key: %v %s %v", first, source, err)
	}
	info, err := os.Stat(source)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info.Mode(), err)
	}
	again, _, err := secretKeys(c)
	if err != nil || again.Primary() != first.Primary() || !strings.HasPrefix(first.Primary(), "local-") {
		t.Fatalf("second start: %v %v (first %s)", again, err, first.Primary())
	}
	keys, _, err := secretKeys(flagContext(t, map[string]string{"data-dir": t.TempDir(), "database-url": "postgres://x/y"}))
	if err != nil || keys != nil {
		t.Fatalf("postgres, no key: %v %v", keys, err)
	}
	e1, _ := envelope.NewEntry("k1")
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte(e1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := secretKeys(flagContext(t, map[string]string{"secrets-key-file": file, "secrets-key": e1})); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Fatalf("both: %v", err)
	}
	if k, _, err := secretKeys(flagContext(t, map[string]string{"secrets-key": "k2:" + strings.Repeat("A", 43) + "=," + e1})); err != nil || strings.Join(k.IDs(), ",") != "k2,k1" {
		t.Fatalf("inline: %v %v", k, err)
	}
	if _, _, err := secretKeys(flagContext(t, map[string]string{"secrets-key": "k1:short"})); err == nil || !strings.Contains(err.Error(), "--secrets-key") {
		t.Fatalf("a bad inline key: %v", err)
	}
}

// TestSecretKeysRewrap: `wfhost secret-keys new` makes an entry; with it as the new primary,
// `wfhost secret-keys rewrap` moves every secret to it, once.
func TestSecretKeysRewrap(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		app := newApp()
		var out bytes.Buffer
		app.Writer = &out
		err := app.Run(append([]string{"wfhost"}, args...))
		return out.String(), err
	}
	k2, err := run("secret-keys", "new", "k2")
	if err != nil || !regexp.MustCompile(`^k2:[A-Za-z0-9+/]{43}=\n$`).MatchString(k2) {
		t.Fatalf("new: %q %v", k2, err)
	}
	k1, _ := envelope.NewEntry("k1")
	keys, _ := envelope.Parse(k1)
	st, err := embedded.Open(ctx, embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), SecretKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSecret(ctx, store.DefaultTenant, "stripe", []byte("sk_live_rotated_value")); err != nil {
		t.Fatal(err)
	}
	st.Close()

	file := filepath.Join(t.TempDir(), "keyring")
	if err := os.WriteFile(file, []byte(k2+k1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run("secret-keys", "rewrap", "--data-dir", dir, "--secrets-key-file", file)
	if err != nil || !strings.Contains(out, "0 secrets encrypted, 1 rewrapped under key k2") {
		t.Fatalf("rewrap: %q %v", out, err)
	}
	out, err = run("secret-keys", "rewrap", "--data-dir", dir, "--secrets-key-file", file)
	if err != nil || !strings.Contains(out, "0 secrets encrypted, 0 rewrapped") {
		t.Fatalf("second rewrap: %q %v", out, err)
	}
	// Without the key the values are under, the command says which and fails.
	if err := os.WriteFile(file, []byte(k1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run("secret-keys", "rewrap", "--data-dir", dir, "--secrets-key-file", file); err == nil || !strings.Contains(err.Error(), `key "k2"`) {
		t.Fatalf("rewrap without the key: %v", err)
	}
}

// TestWrongKeyRefusesHookSecrets: a daemon started with a keyring whose primary has the id
// the tenants' webhook signing secrets were sealed under, but other bytes, refuses to start
// and names the tenant's signing secret, rather than sign deliveries no receiver can verify;
// `wfhost secret-keys rewrap` says the same. The right keyring starts.
func TestWrongKeyRefusesHookSecrets(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	right, _ := envelope.NewEntry("k1")
	wrong, _ := envelope.NewEntry("k1")
	keys, _ := envelope.Parse(right)
	st, err := embedded.Open(ctx, embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), SecretKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := eng.RotateHookSecret(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	start := func(entry string) error {
		file := filepath.Join(t.TempDir(), "keyring")
		if err := os.WriteFile(file, []byte(entry+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := embedded.Open(ctx, embedded.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var logs bytes.Buffer
		_, err = loadSecretKeys(ctx, flagContext(t, map[string]string{"data-dir": dir, "secrets-key-file": file}), st,
			slog.New(slog.NewTextHandler(&logs, nil)))
		if strings.Contains(logs.String(), string(secret)) || (err != nil && strings.Contains(err.Error(), string(secret))) {
			t.Fatalf("the secret was logged or returned: %s %v", logs.String(), err)
		}
		return err
	}
	if err := start(wrong); err == nil || !strings.Contains(err.Error(), "acme webhook signing secret") ||
		!strings.Contains(err.Error(), envelope.ErrOpen.Error()) {
		t.Fatalf("a start with the wrong key: %v", err)
	}
	if err := start(right); err != nil {
		t.Fatalf("a start with the right key: %v", err)
	}
}
