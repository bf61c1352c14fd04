package rdb

import (
	"encoding/binary"
	"errors"
)

// FunctionsPayload is FUNCTION DUMP's payload (functionDumpCommand): each
// library's code after RDB_OPCODE_FUNCTION2 as rdbSaveFunctions writes it,
// then the RDB version (2 bytes LE) and the CRC-64 of all that (8 bytes LE).
func FunctionsPayload(codes []string, compress bool) []byte {
	var b []byte
	for _, c := range codes {
		b = append(b, opFunction2)
		b = appendStr(b, c, compress)
	}
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

// FUNCTION RESTORE's payload errors (functionRestoreCommand), without the
// "ERR " prefix. A bad footer is ErrPayload.
var (
	ErrFunctionPreGA    = errors.New("Pre-GA function format not supported")
	ErrNotFunction      = errors.New("given type is not a function")
	ErrFunctionLoad     = errors.New("Failed loading library payload")
	ErrFunctionDataType = errors.New("can not read data type")
)

// ParseFunctionsPayload is FUNCTION RESTORE's verifyDumpPayload and read
// loop: it calls fn with each library code of a FUNCTION DUMP payload, in
// order, and stops at fn's first error (returned as is): as Redis's, a
// library is created as soon as it is read. The records are read while
// more than the 10 footer bytes remain.
func ParseFunctionsPayload(p []byte, fn func(code string) error) error {
	if len(p) < 10 {
		return ErrPayload
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return ErrPayload
	}
	if CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return ErrPayload
	}
	rd := newReader(&byteReader{b: p}, false)
	for int64(len(p))-rd.off > 10 {
		t, err := rd.byte()
		if err != nil {
			return ErrFunctionDataType
		}
		switch t {
		case opFunction:
			return ErrFunctionPreGA
		case opFunction2:
		default:
			return ErrNotFunction
		}
		code, err := rd.str()
		if err != nil {
			return ErrFunctionLoad
		}
		if err := fn(string(code)); err != nil {
			return err
		}
	}
	return nil
}
