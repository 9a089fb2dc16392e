// Package envelope encrypts secrets at rest with envelope encryption: each value under a data
// key of its own (AES-256-GCM), the data key wrapped (encrypted, AES-256-GCM) by a
// key-encryption key of the operator's keyring, whose id is stored with the value so keys can
// rotate: Rewrap moves a value to the keyring's primary key without touching its ciphertext.
//
// Every ciphertext is bound to a context (the engine passes the tenant and the secret's name),
// so a value copied to another row does not open. Imports: the standard library only.
package envelope
