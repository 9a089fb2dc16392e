package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// The key that encrypts tenant secrets at rest (engine/secrets.go): a keyring of entries
// "ID:KEY", the first the primary. Without one, the embedded store gets a key file of its own
// in its data directory, and Postgres refuses to store secrets (engine.ErrSecretsDisabled).

// secretKeyFile is the keyring the daemon makes for the embedded store when it is given none.
const secretKeyFile = "secrets.key"

func secretKeyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "secrets-key-file", EnvVars: []string{"WFHOST_SECRETS_KEY_FILE"},
			Usage: "the keyring that encrypts tenant secrets: lines ID:KEY (KEY the base64 of 32 random bytes; `wfhost secret-keys new ID` makes one), the first the primary, older ones after it " +
				"(default: none for Postgres, which then refuses to store secrets; --data-dir/" + secretKeyFile + ", made at first start, for the embedded store)"},
		&cli.StringFlag{Name: "secrets-key", EnvVars: []string{"WFHOST_SECRETS_KEY"},
			Usage: "the keyring itself, entries separated by commas, instead of a file (set it in the environment: a flag's value shows in the process list)"},
	}
}

// loadSecretKeys reads the keyring the flags give; nil when there is none and the store is
// Postgres. It then brings every stored secret under the primary key (engine.SealSecrets:
// rows from before encryption sealed, older keys' data keys rewrapped) and refuses to go on
// when some value is under a key the keyring lacks.
func loadSecretKeys(ctx context.Context, c *cli.Context, st store.Store, log *slog.Logger) (*envelope.Keyring, error) {
	keys, source, err := secretKeys(c)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		log.Warn("secrets are disabled: no key to encrypt them with; PUT /v1/secrets, and a webhook hook or rotation that needs a new signing secret, answer 503 until the daemon is started with --secrets-key-file or WFHOST_SECRETS_KEY (values stored before encryption are still read)")
		return nil, nil
	}
	rep, err := engine.SealSecrets(ctx, st, keys, log)
	if err != nil {
		return nil, err
	}
	if len(rep.Failed) > 0 {
		return nil, fmt.Errorf("%d secrets cannot be opened with the keyring from %s (primary %s): %s; add the keys they name to the keyring, after the primary",
			len(rep.Failed), source, keys.Primary(), strings.Join(rep.Failed, "; "))
	}
	log.Info("secrets are encrypted at rest", "keyring", source, "primary_key", keys.Primary(), "sealed", rep.Sealed, "rewrapped", rep.Rewrapped,
		"hook_secrets_sealed", rep.HookSecretsSealed, "hook_secrets_rewrapped", rep.HookSecretsRewrapped)
	return keys, nil
}

// secretKeys reads the keyring from --secrets-key-file or --secrets-key; for the embedded
// store without either, from the data directory's key file, made on first use.
func secretKeys(c *cli.Context) (*envelope.Keyring, string, error) {
	file, inline := c.String("secrets-key-file"), c.String("secrets-key")
	switch {
	case file != "" && inline != "":
		return nil, "", errors.New("--secrets-key-file and --secrets-key (WFHOST_SECRETS_KEY) are both set: give one")
	case inline != "":
		k, err := envelope.Parse(strings.ReplaceAll(inline, ",", "\n"))
		if err != nil {
			return nil, "", fmt.Errorf("--secrets-key: %w", err)
		}
		return k, "WFHOST_SECRETS_KEY", nil
	case file != "":
		k, err := readKeyFile(file)
		return k, file, err
	case c.String("database-url") != "":
		return nil, "", nil
	}
	path := filepath.Join(c.String("data-dir"), secretKeyFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := writeKeyFile(path); err != nil {
			return nil, "", err
		}
	}
	k, err := readKeyFile(path)
	return k, path, err
}

func readKeyFile(path string) (*envelope.Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets-key-file: %w", err)
	}
	k, err := envelope.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("--secrets-key-file %s: %w", path, err)
	}
	return k, nil
}

// writeKeyFile makes a keyring of one new key, readable by the daemon's user only. Created
// exclusively: two daemons starting at once on one directory never overwrite each other's.
func writeKeyFile(path string) error {
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	entry, err := envelope.NewEntry("local-" + hex.EncodeToString(id[:]))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("secrets key file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("secrets key file: %w", err)
	}
	text := "# wfhost's keyring for tenant secrets (made by the daemon for the embedded store).\n" +
		"# One key a line, ID:KEY; the first is the primary. Keep a copy apart from the database.\n" + entry + "\n"
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("secrets key file: %w", err)
	}
	return f.Close()
}

// secretKeysCommand makes keys and rotates to them.
func secretKeysCommand() *cli.Command {
	return &cli.Command{
		Name:  "secret-keys",
		Usage: "the keys that encrypt tenant secrets at rest: make one, or rewrap every secret under the primary",
		Subcommands: []*cli.Command{
			{
				Name:      "new",
				Usage:     "print a keyring entry ID:KEY with a new random key",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("usage: wfhost secret-keys new ID (letters, digits, '.', '_', '-')")
					}
					entry, err := envelope.NewEntry(c.Args().First())
					if err != nil {
						return err
					}
					fmt.Fprintln(c.App.Writer, entry)
					return nil
				},
			},
			{
				Name: "rewrap",
				Usage: "encrypt the secrets (and webhook signing secrets) stored before encryption and rewrap every data key under the keyring's primary key, then exit " +
					"(the daemon does the same at start)",
				Flags: append(append(dbFlags(), dataDirFlag()), secretKeyFlags()...),
				Action: func(c *cli.Context) error {
					st, name, err := openStore(c.Context, c)
					if err != nil {
						return err
					}
					defer st.Close()
					keys, source, err := secretKeys(c)
					if err != nil {
						return err
					}
					if keys == nil {
						return errors.New("no keyring: give --secrets-key-file or WFHOST_SECRETS_KEY")
					}
					rep, err := engine.SealSecrets(c.Context, st, keys, nil)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%s: %d secrets encrypted, %d rewrapped under key %s (keyring %s); webhook signing secrets: %d encrypted, %d rewrapped\n",
						name, rep.Sealed, rep.Rewrapped, keys.Primary(), source, rep.HookSecretsSealed, rep.HookSecretsRewrapped)
					if len(rep.Failed) > 0 {
						return fmt.Errorf("%d secrets left as they were: %s", len(rep.Failed), strings.Join(rep.Failed, "; "))
					}
					return nil
				},
			},
		},
	}
}
