package netshell

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// An encrypted PKCS#8 key (RFC 5958 EncryptedPrivateKeyInfo) with PBES2
// (RFC 8018): the key derived by PBKDF2, the key info encrypted in CBC
// mode. This is what OpenSSL 3 writes for `openssl genpkey -aes256` and
// `openssl rsa -aes256`, which Go's x509 does not read.

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algo          algorithmIdentifier
	EncryptedData []byte
}

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type pbes2Params struct {
	KDF    algorithmIdentifier
	Scheme algorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                 `asn1:"optional"`
	PRF        algorithmIdentifier `asn1:"optional"`
}

// decryptPKCS8 returns the PrivateKeyInfo DER of an encrypted PKCS#8 key.
func decryptPKCS8(der []byte, pass string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encrypted PKCS#8 key: scheme %v is not supported (PBES2 only)", info.Algo.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("encrypted PKCS#8 key: key derivation %v is not supported (PBKDF2 only)", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	var prf func() hash.Hash
	switch a := kdf.PRF.Algorithm; {
	case len(a) == 0 || a.Equal(oidHMACSHA1):
		prf = sha1.New
	case a.Equal(oidHMACSHA224):
		prf = sha256.New224
	case a.Equal(oidHMACSHA256):
		prf = sha256.New
	case a.Equal(oidHMACSHA384):
		prf = sha512.New384
	case a.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("encrypted PKCS#8 key: PRF %v is not supported", a)
	}
	var keyLen int
	var newCipher func([]byte) (cipher.Block, error)
	switch a := params.Scheme.Algorithm; {
	case a.Equal(oidAES128CBC):
		keyLen, newCipher = 16, aes.NewCipher
	case a.Equal(oidAES192CBC):
		keyLen, newCipher = 24, aes.NewCipher
	case a.Equal(oidAES256CBC):
		keyLen, newCipher = 32, aes.NewCipher
	case a.Equal(oidDESEDE3CBC):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("encrypted PKCS#8 key: cipher %v is not supported", a)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Scheme.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	if kdf.Iterations <= 0 || kdf.Iterations > 1<<24 {
		return nil, errors.New("encrypted PKCS#8 key: bad iteration count")
	}
	key, err := pbkdf2.Key(prf, pass, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	data := info.EncryptedData
	if len(iv) != block.BlockSize() || len(data) == 0 || len(data)%block.BlockSize() != 0 {
		return nil, errors.New("encrypted PKCS#8 key: bad data length")
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	// PKCS#7 padding; a wrong password shows here (or as a key that does
	// not parse).
	n := int(out[len(out)-1])
	if n == 0 || n > block.BlockSize() {
		return nil, errors.New("bad decrypt (wrong tls-key-file-pass?)")
	}
	for _, b := range out[len(out)-n:] {
		if int(b) != n {
			return nil, errors.New("bad decrypt (wrong tls-key-file-pass?)")
		}
	}
	return out[:len(out)-n], nil
}
