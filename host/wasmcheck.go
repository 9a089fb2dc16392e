package host

import (
	"errors"
	"fmt"
	"math"
)

// ModuleBounds bound what the structural pre-check (checkModule) lets through to wazero's
// decoder and compiler. wazero sizes some allocations from the counts a module declares (one
// declaration of 2^32 locals made it try to allocate 32 GiB), so every count and size is
// checked, with overflow-safe sums, before wazero reads a byte. The outer bounds are the
// WebAssembly JS API's implementation limits, which every browser engine enforces; where our
// defaults are tighter, RATIONALE.md ("Bounds on an upload") says why and how far the
// committed fixtures are from each. Zero fields take DefaultModuleBounds.
type ModuleBounds struct {
	MaxTypes           int // type section entries (JS API: 1,000,000)
	MaxImports         int // imports (JS API: 100,000)
	MaxFunctions       int // functions, imported and defined (JS API: 1,000,000)
	MaxTables          int // tables, imported and defined (JS API: 100,000)
	MaxTableSize       int // a table's declared minimum size (JS API: 10,000,000)
	MaxGlobals         int // globals, imported and defined (JS API: 1,000,000)
	MaxExports         int // exports (JS API: 100,000)
	MaxElemSegments    int // element segments (JS API: 10,000,000)
	MaxElemEntries     int // entries in all element segments together (JS API table size: 10,000,000)
	MaxDataSegments    int // data segments (JS API: 100,000)
	MaxParams          int // parameters of one function type (JS API: 1,000)
	MaxResults         int // results of one function type or block (JS API: 1,000)
	MaxLocals          int // a function's parameters and declared locals together (JS API: 50,000)
	MaxFunctionBytes   int // one function body, its local declarations included (JS API: 7,654,321)
	MaxNesting         int // depth of nested blocks, loops and ifs in one function body (no JS API limit)
	MaxBrTableTargets  int // targets of one br_table (no JS API limit; wasmparser and ChakraCore: 1,000,000)
	MaxNameBytes       int // an import, export or custom section name (JS API: 100,000)
	MaxCustomSections  int // custom sections (no JS API limit)
	MaxMemoryPagesSeen int // a memory's declared minimum, in 64 KiB pages (JS API: 65,536)
}

// DefaultModuleBounds are the bounds of a zero ModuleBounds field.
var DefaultModuleBounds = ModuleBounds{
	MaxTypes:           100_000,
	MaxImports:         10_000,
	MaxFunctions:       200_000,
	MaxTables:          100,
	MaxTableSize:       1_000_000,
	MaxGlobals:         100_000,
	MaxExports:         100_000,
	MaxElemSegments:    100_000,
	MaxElemEntries:     1_000_000,
	MaxDataSegments:    100_000,
	MaxParams:          1_000,
	MaxResults:         1_000,
	MaxLocals:          50_000,
	MaxFunctionBytes:   7_654_321,
	MaxNesting:         10_000,
	MaxBrTableTargets:  1_000_000,
	MaxNameBytes:       100_000,
	MaxCustomSections:  10_000,
	MaxMemoryPagesSeen: 65_536,
}

func (b ModuleBounds) withDefaults() ModuleBounds {
	d := DefaultModuleBounds
	or := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	or(&b.MaxTypes, d.MaxTypes)
	or(&b.MaxImports, d.MaxImports)
	or(&b.MaxFunctions, d.MaxFunctions)
	or(&b.MaxTables, d.MaxTables)
	or(&b.MaxTableSize, d.MaxTableSize)
	or(&b.MaxGlobals, d.MaxGlobals)
	or(&b.MaxExports, d.MaxExports)
	or(&b.MaxElemSegments, d.MaxElemSegments)
	or(&b.MaxElemEntries, d.MaxElemEntries)
	or(&b.MaxDataSegments, d.MaxDataSegments)
	or(&b.MaxParams, d.MaxParams)
	or(&b.MaxResults, d.MaxResults)
	or(&b.MaxLocals, d.MaxLocals)
	or(&b.MaxFunctionBytes, d.MaxFunctionBytes)
	or(&b.MaxNesting, d.MaxNesting)
	or(&b.MaxBrTableTargets, d.MaxBrTableTargets)
	or(&b.MaxNameBytes, d.MaxNameBytes)
	or(&b.MaxCustomSections, d.MaxCustomSections)
	or(&b.MaxMemoryPagesSeen, d.MaxMemoryPagesSeen)
	return b
}

// moduleFacts is what the pre-check learned of a module, and the largest value it met for
// each bound (for RATIONALE.md's table of how far the fixtures are from the bounds).
type moduleFacts struct {
	// MinMemoryPages is the declared minimum of the module's own memory (0 without one): an
	// activation whose memory limit is below it can never instantiate the module.
	MinMemoryPages uint32
	HasMemory      bool

	Types, Imports, Functions, Tables, MaxTableSize, Globals, Exports int
	ElemSegments, ElemEntries, DataSegments, CustomSections           int
	MaxParams, MaxResults, MaxLocals, MaxFunctionBytes, MaxNesting    int
	MaxBrTableTargets, MaxNameBytes                                   int
}

// checkError is a fault the pre-check found: where in the binary, and what.
type checkError struct {
	offset int
	msg    string
}

func (e *checkError) Error() string { return fmt.Sprintf("at byte %d: %s", e.offset, e.msg) }

// Section ids, in the order the binary format requires (the data count section, 12, sits
// between the element and code sections).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "data count"}

// sectionRank orders the known non-custom sections.
var sectionRank = map[byte]int{secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secGlobal: 6, secExport: 7, secStart: 8, secElement: 9, secDataCount: 10, secCode: 11, secData: 12}

// checkModule reads a whole wasm binary once, in bounded time and memory, and refuses what
// would make wazero's decoder or compiler allocate or work without bound, what wazero does not
// support, and what the spec forbids but wazero lets through (active element and data segments
// outside the module's own table or memory). It never allocates in proportion to a count the
// module declares, only to what it has read.
func checkModule(wasm []byte, b ModuleBounds) (moduleFacts, error) {
	c := checker{r: reader{b: wasm}, bounds: b}
	c.module()
	if c.err != nil {
		return c.facts, c.err
	}
	return c.facts, nil
}

type checker struct {
	r      reader
	bounds ModuleBounds
	facts  moduleFacts
	err    *checkError

	typeCount     int
	funcTypes     []uint32 // type index of every function, imported ones first
	importedFuncs int
	params        []int // parameter count of each type
	tableMins     []uint64
	tableImported []bool
	memMin        uint64
	memDefined    bool
	memCount      int
	globalCount   int
	dataCount     int    // declared by the data count section, -1 without one
	inSection     string // the section being read, for errors
}

// fail records the first fault at the reader's position.
func (c *checker) fail(format string, args ...any) {
	if c.err == nil {
		c.err = &checkError{offset: c.r.pos, msg: c.inSection + fmt.Sprintf(format, args...)}
	}
}

func (c *checker) ok() bool {
	if c.err == nil && c.r.err != nil {
		c.err = &checkError{offset: c.r.pos, msg: c.inSection + c.r.err.Error()}
	}
	return c.err == nil
}

// count reads a vector length and bounds it, both by its own limit and by the bytes left
// (every entry takes at least one byte), so no loop runs longer than the input.
func (c *checker) count(what string, limit int) int {
	at := c.r.pos
	n := c.r.uleb()
	if !c.ok() {
		return 0
	}
	if n > uint64(limit) {
		c.r.pos = at
		c.fail("%d %s, the limit is %d", n, what, limit)
		return 0
	}
	if left := len(c.r.b) - c.r.pos; n > uint64(left) {
		c.r.pos = at
		c.fail("%d %s declared in %d remaining bytes", n, what, left)
		return 0
	}
	return int(n)
}

func (c *checker) module() {
	if len(c.r.b) < 8 || string(c.r.b[:4]) != "\x00asm" {
		c.fail("not a WebAssembly module (no \\0asm header)")
		return
	}
	if v := c.r.b[4:8]; v[0] != 1 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		c.fail("binary format version %x, want 1 (a component or a newer format)", v)
		return
	}
	c.r.pos = 8
	c.dataCount = -1
	lastRank, funcDecls, codeSeen := 0, -1, false
	for c.ok() && c.r.pos < len(c.r.b) {
		at := c.r.pos
		id := c.r.byte()
		size := c.r.uleb()
		if !c.ok() {
			return
		}
		if size > uint64(len(c.r.b)-c.r.pos) {
			c.r.pos = at
			c.fail("section %s declares %d bytes, %d remain", sectionName(id), size, len(c.r.b)-c.r.pos-1)
			return
		}
		end := c.r.pos + int(size)
		if id != secCustom {
			rank, known := sectionRank[id]
			if !known {
				c.r.pos = at
				c.fail("unknown section id %d", id)
				return
			}
			if rank <= lastRank {
				c.r.pos = at
				c.fail("%s section out of order or repeated", sectionName(id))
				return
			}
			lastRank = rank
		}
		// Each section is read from a sub-reader ending at its declared end, so a lying
		// length is caught where it lies.
		outer := c.r
		c.r = reader{b: c.r.b[:end], pos: c.r.pos}
		c.inSection = sectionName(id) + " section: "
		switch id {
		case secCustom:
			c.facts.CustomSections++
			if c.facts.CustomSections > c.bounds.MaxCustomSections {
				c.fail("more than %d custom sections", c.bounds.MaxCustomSections)
			}
			c.name("custom section name")
			c.r.pos = end
		case secType:
			c.types()
		case secImport:
			c.imports()
		case secFunction:
			funcDecls = c.functions()
		case secTable:
			c.tables()
		case secMemory:
			c.memories()
		case secGlobal:
			c.globals()
		case secExport:
			c.exports()
		case secStart:
			c.funcIndex("start function")
		case secElement:
			c.elements()
		case secDataCount:
			c.dataCount = int(c.r.uleb())
		case secCode:
			codeSeen = true
			c.code(max(funcDecls, 0))
		case secData:
			c.data()
		}
		if !c.ok() {
			return
		}
		if c.r.pos != end {
			c.fail("%d bytes after its last entry", end-c.r.pos)
			return
		}
		outer.pos = end
		c.r = outer
		c.inSection = ""
	}
	if !c.ok() {
		return
	}
	if funcDecls > 0 && !codeSeen {
		c.fail("%d functions declared but no code section", funcDecls)
	}
}

func sectionName(id byte) string {
	if int(id) < len(sectionNames) {
		return sectionNames[id]
	}
	return fmt.Sprintf("id %d", id)
}

// name reads a name and bounds its length.
func (c *checker) name(what string) {
	at := c.r.pos
	n := c.r.uleb()
	if !c.ok() {
		return
	}
	if n > uint64(c.bounds.MaxNameBytes) {
		c.r.pos = at
		c.fail("%s of %d bytes, the limit is %d", what, n, c.bounds.MaxNameBytes)
		return
	}
	c.facts.MaxNameBytes = max(c.facts.MaxNameBytes, int(n))
	c.r.skip(int(n))
}

func (c *checker) types() {
	n := c.count("types", c.bounds.MaxTypes)
	c.facts.Types = n
	for i := 0; i < n && c.ok(); i++ {
		if form := c.r.byte(); form != 0x60 {
			c.r.pos--
			c.fail("type %d: form %#x; only function types (0x60) are supported", i, form)
			return
		}
		params := c.count("parameters", c.bounds.MaxParams)
		c.facts.MaxParams = max(c.facts.MaxParams, params)
		for range params {
			c.valType()
		}
		results := c.count("results", c.bounds.MaxResults)
		c.facts.MaxResults = max(c.facts.MaxResults, results)
		for range results {
			c.valType()
		}
		c.params = append(c.params, params)
	}
	c.typeCount = n
}

func (c *checker) valType() {
	switch t := c.r.byte(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f: // i32 i64 f32 f64 v128 funcref externref
	default:
		if c.ok() {
			c.r.pos--
			c.fail("unknown value type %#x", t)
		}
	}
}

func (c *checker) typeIndex(what string) uint32 {
	at := c.r.pos
	i := c.r.uleb()
	if c.ok() && i >= uint64(c.typeCount) {
		c.r.pos = at
		c.fail("%s: type index %d, the module has %d types", what, i, c.typeCount)
	}
	return uint32(i)
}

func (c *checker) imports() {
	n := c.count("imports", c.bounds.MaxImports)
	c.facts.Imports = n
	for i := 0; i < n && c.ok(); i++ {
		c.name("import module name")
		c.name("import name")
		switch kind := c.r.byte(); kind {
		case 0x00:
			c.funcTypes = append(c.funcTypes, c.typeIndex("imported function"))
			c.importedFuncs++
		case 0x01:
			c.table(true)
		case 0x02:
			c.memory()
		case 0x03:
			c.valType()
			c.mutability()
			c.globalCount++
		default:
			if c.ok() {
				c.r.pos--
				c.fail("import %d: unknown import kind %#x", i, kind)
			}
		}
		c.checkTotals()
	}
}

func (c *checker) mutability() {
	if m := c.r.byte(); m > 1 && c.ok() {
		c.r.pos--
		c.fail("global mutability %#x", m)
	}
}

// checkTotals bounds the index spaces that imports and definitions add to.
func (c *checker) checkTotals() {
	switch {
	case len(c.funcTypes) > c.bounds.MaxFunctions:
		c.fail("more than %d functions", c.bounds.MaxFunctions)
	case len(c.tableMins) > c.bounds.MaxTables:
		c.fail("more than %d tables", c.bounds.MaxTables)
	case c.globalCount > c.bounds.MaxGlobals:
		c.fail("more than %d globals", c.bounds.MaxGlobals)
	case c.memCount > 1:
		c.fail("more than one memory (multiple memories are not supported)")
	}
	c.facts.Functions, c.facts.Tables, c.facts.Globals = len(c.funcTypes), len(c.tableMins), c.globalCount
}

func (c *checker) functions() int {
	n := c.count("functions", c.bounds.MaxFunctions)
	for i := 0; i < n && c.ok(); i++ {
		c.funcTypes = append(c.funcTypes, c.typeIndex(fmt.Sprintf("function %d", c.importedFuncs+i)))
		c.checkTotals()
	}
	return n
}

// limits reads a table's or memory's limits; memory64 and shared limits are refused.
func (c *checker) limits(what string) (lo uint64, hi uint64, hasMax bool) {
	flags := c.r.byte()
	if flags > 1 && c.ok() {
		c.r.pos--
		switch {
		case flags&0x02 != 0:
			// The threads proposal's shared memory: threads racing on it make a run's behaviour
			// depend on the host's scheduling (ABI.md §6, "Across hosts").
			c.fail("%s limits flags %#x declare a shared %s (threads): not supported, a shared memory is not deterministic", what, flags, what)
		default:
			c.fail("%s limits flags %#x (64-bit) are not supported", what, flags)
		}
		return
	}
	lo = c.r.uleb()
	if flags == 1 {
		hi, hasMax = c.r.uleb(), true
		if c.ok() && hi < lo {
			c.fail("%s maximum %d below its minimum %d", what, hi, lo)
		}
	}
	if c.ok() && lo > math.MaxUint32 {
		c.fail("%s minimum %d over 2^32-1", what, lo)
	}
	return lo, hi, hasMax
}

func (c *checker) table(imported bool) {
	switch rt := c.r.byte(); rt {
	case 0x70, 0x6f:
	default:
		if c.ok() {
			c.r.pos--
			c.fail("table element type %#x", rt)
		}
		return
	}
	at := c.r.pos
	lo, _, _ := c.limits("table")
	if c.ok() && lo > uint64(c.bounds.MaxTableSize) {
		c.r.pos = at
		c.fail("a table of at least %d entries, the limit is %d", lo, c.bounds.MaxTableSize)
		return
	}
	c.facts.MaxTableSize = max(c.facts.MaxTableSize, int(lo))
	c.tableMins = append(c.tableMins, lo)
	c.tableImported = append(c.tableImported, imported)
}

func (c *checker) tables() {
	n := c.count("tables", c.bounds.MaxTables)
	for i := 0; i < n && c.ok(); i++ {
		c.table(false)
		c.checkTotals()
	}
}

func (c *checker) memory() {
	at := c.r.pos
	lo, _, _ := c.limits("memory")
	if c.ok() && lo > uint64(c.bounds.MaxMemoryPagesSeen) {
		c.r.pos = at
		c.fail("a memory of at least %d pages, the limit is %d", lo, c.bounds.MaxMemoryPagesSeen)
	}
	c.memMin = lo
	c.memCount++
	c.checkTotals()
}

func (c *checker) memories() {
	n := c.count("memories", 1)
	for i := 0; i < n && c.ok(); i++ {
		c.memory()
		c.memDefined = true
		c.facts.HasMemory = true
		c.facts.MinMemoryPages = uint32(c.memMin)
	}
}

func (c *checker) globals() {
	n := c.count("globals", c.bounds.MaxGlobals)
	for i := 0; i < n && c.ok(); i++ {
		c.valType()
		c.mutability()
		c.constExpr()
		c.globalCount++
		c.checkTotals()
	}
}

func (c *checker) exports() {
	n := c.count("exports", c.bounds.MaxExports)
	c.facts.Exports = n
	for i := 0; i < n && c.ok(); i++ {
		c.name("export name")
		if kind := c.r.byte(); kind > 3 && c.ok() {
			c.r.pos--
			c.fail("export %d: unknown export kind %#x", i, kind)
			return
		}
		c.r.uleb()
	}
}

func (c *checker) funcIndex(what string) {
	at := c.r.pos
	if i := c.r.uleb(); c.ok() && i >= uint64(len(c.funcTypes)) {
		c.r.pos = at
		c.fail("%s: function index %d, the module has %d functions", what, i, len(c.funcTypes))
	}
}

// constExpr reads a constant expression and returns its value when it is a single i32.const
// (the only offset the pre-check can place without instantiating).
func (c *checker) constExpr() (value uint32, isConst bool) {
	first := true
	for c.ok() {
		at := c.r.pos
		op := c.r.byte()
		switch op {
		case 0x0b:
			return value, isConst
		case 0x41: // i32.const
			v := c.r.sleb(32)
			value, isConst = uint32(int32(v)), first
		case 0x42: // i64.const
			c.r.sleb(64)
			isConst = false
		case 0x23, 0xd2: // global.get, ref.func
			c.r.uleb()
			isConst = false
		case 0x43:
			c.r.skip(4)
			isConst = false
		case 0x44:
			c.r.skip(8)
			isConst = false
		case 0xd0:
			c.r.byte()
			isConst = false
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constant arithmetic
			isConst = false
		case 0xfd: // v128.const
			if sub := c.r.uleb(); sub != 12 && c.ok() {
				c.r.pos = at
				c.fail("SIMD opcode %d in a constant expression", sub)
				return
			}
			c.r.skip(16)
			isConst = false
		default:
			c.r.pos = at
			c.fail("opcode %#x in a constant expression", op)
			return
		}
		first = false
	}
	return
}

func (c *checker) elements() {
	n := c.count("element segments", c.bounds.MaxElemSegments)
	c.facts.ElemSegments = n
	for i := 0; i < n && c.ok(); i++ {
		at := c.r.pos
		flags := c.r.uleb()
		if flags > 7 && c.ok() {
			c.r.pos = at
			c.fail("element segment %d: flags %d", i, flags)
			return
		}
		active, explicitTable, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		table := uint64(0)
		if active && explicitTable {
			table = c.r.uleb()
		}
		var (
			offset   uint32
			isConst  bool
			offsetAt = c.r.pos
		)
		if active {
			offset, isConst = c.constExpr()
		}
		if !active || explicitTable {
			c.r.byte() // element kind (0x00, funcref) or reference type
		}
		entries := c.count("element segment entries", c.bounds.MaxElemEntries-c.facts.ElemEntries)
		c.facts.ElemEntries += entries
		for j := 0; j < entries && c.ok(); j++ {
			if exprs {
				c.constExpr()
			} else {
				c.funcIndex(fmt.Sprintf("element segment %d", i))
			}
		}
		if !c.ok() || !active {
			continue
		}
		if table >= uint64(len(c.tableMins)) {
			c.r.pos = at
			c.fail("element segment %d: table %d, the module has %d tables", i, table, len(c.tableMins))
			return
		}
		// The spec fails instantiation when an active segment does not fit its table, which
		// has its declared minimum size until the module runs; wazero does not check.
		if isConst && !c.tableImported[table] && uint64(offset)+uint64(entries) > c.tableMins[table] {
			c.r.pos = offsetAt
			c.fail("element segment %d: entries %d to %d are outside table %d of %d entries", i, offset, uint64(offset)+uint64(entries), table, c.tableMins[table])
			return
		}
	}
}

func (c *checker) data() {
	n := c.count("data segments", c.bounds.MaxDataSegments)
	c.facts.DataSegments = n
	if c.dataCount >= 0 && n != c.dataCount {
		c.fail("%d data segments; the data count section says %d", n, c.dataCount)
		return
	}
	for i := 0; i < n && c.ok(); i++ {
		at := c.r.pos
		flags := c.r.uleb()
		if flags > 2 && c.ok() {
			c.r.pos = at
			c.fail("data segment %d: flags %d", i, flags)
			return
		}
		var (
			offset   uint32
			isConst  bool
			offsetAt int
		)
		if flags == 2 {
			if mem := c.r.uleb(); mem != 0 && c.ok() {
				c.fail("data segment %d: memory %d", i, mem)
				return
			}
		}
		if flags != 1 {
			offsetAt = c.r.pos
			offset, isConst = c.constExpr()
		}
		size := c.r.uleb()
		if c.ok() && size > uint64(len(c.r.b)-c.r.pos) {
			c.fail("data segment %d declares %d bytes, %d remain", i, size, len(c.r.b)-c.r.pos)
			return
		}
		c.r.skip(int(size))
		if !c.ok() || flags == 1 {
			continue
		}
		if c.memCount == 0 {
			c.r.pos = at
			c.fail("data segment %d: the module has no memory", i)
			return
		}
		if isConst && c.memDefined && uint64(offset)+size > c.memMin*65536 {
			c.r.pos = offsetAt
			c.fail("data segment %d: bytes %d to %d are outside the memory's %d initial pages", i, offset, uint64(offset)+size, c.memMin)
			return
		}
	}
}

func (c *checker) code(declared int) {
	n := c.count("function bodies", c.bounds.MaxFunctions)
	if c.ok() && n != declared {
		c.fail("%d function bodies for %d declared functions", n, declared)
		return
	}
	for i := 0; i < n && c.ok(); i++ {
		at := c.r.pos
		size := c.r.uleb()
		if !c.ok() {
			return
		}
		index := c.importedFuncs + i
		if size > uint64(c.bounds.MaxFunctionBytes) {
			c.r.pos = at
			c.fail("function %d: body of %d bytes, the limit is %d", index, size, c.bounds.MaxFunctionBytes)
			return
		}
		if size > uint64(len(c.r.b)-c.r.pos) {
			c.r.pos = at
			c.fail("function %d: body of %d bytes, %d remain in the code section", index, size, len(c.r.b)-c.r.pos)
			return
		}
		c.facts.MaxFunctionBytes = max(c.facts.MaxFunctionBytes, int(size))
		end := c.r.pos + int(size)
		outer := c.r
		c.r = reader{b: c.r.b[:end], pos: c.r.pos}
		c.body(index)
		if c.ok() && c.r.pos != end {
			c.fail("function %d: %d bytes after its final end", index, end-c.r.pos)
		}
		if !c.ok() {
			return
		}
		outer.pos = end
		c.r = outer
	}
}

// body reads one function body: its local declarations, summed without overflow, and every
// instruction with its immediates, tracking block nesting.
func (c *checker) body(index int) {
	locals := uint64(c.params[c.funcTypes[index]])
	groups := c.count("local declarations", c.bounds.MaxLocals)
	for range groups {
		at := c.r.pos
		// Each group adds at most 2^32-1 and the sum is checked after each, so it cannot
		// overflow a uint64.
		locals += c.r.uleb()
		c.valType()
		if !c.ok() {
			return
		}
		if locals > uint64(c.bounds.MaxLocals) {
			c.r.pos = at
			c.fail("function %d declares more than %d locals (parameters included)", index, c.bounds.MaxLocals)
			return
		}
	}
	c.facts.MaxLocals = max(c.facts.MaxLocals, int(locals))
	c.instructions(index)
}

// instructions walks a function's code to its final end. Every opcode wazero accepts by
// default (WebAssembly 2.0: sign extension, non-trapping conversions, bulk memory, reference
// types, multi-value, SIMD) is known with its immediates; any other is refused by name and
// offset before wazero sees it.
func (c *checker) instructions(index int) {
	depth := 1 // the function body is the outermost block
	for c.ok() {
		at := c.r.pos
		op := c.r.byte()
		if c.r.err != nil {
			c.fail("function %d: code runs past its body without a final end", index)
			return
		}
		switch {
		case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
			// unreachable, nop, else, return, drop, select, ref.is_null
		case op >= 0x02 && op <= 0x04: // block, loop, if
			c.r.sleb(33) // block type: empty, a value type or a type index
			depth++
			if depth > c.bounds.MaxNesting {
				c.r.pos = at
				c.fail("function %d nests blocks deeper than %d", index, c.bounds.MaxNesting)
				return
			}
			c.facts.MaxNesting = max(c.facts.MaxNesting, depth)
		case op == 0x0b: // end
			depth--
			if depth == 0 {
				return
			}
		case op == 0x0c || op == 0x0d: // br, br_if
			c.r.uleb()
		case op == 0x0e: // br_table
			n := c.count("br_table targets", c.bounds.MaxBrTableTargets)
			c.facts.MaxBrTableTargets = max(c.facts.MaxBrTableTargets, n)
			for i := 0; i <= n && c.ok(); i++ {
				c.r.uleb()
			}
		case op == 0x10 || op == 0x12: // call, return_call
			c.funcIndex(fmt.Sprintf("function %d: call", index))
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			c.r.uleb()
			c.r.uleb()
		case op == 0x1c: // select with types
			n := c.count("select types", 1)
			for range n {
				c.valType()
			}
		case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
			c.r.uleb()
		case op >= 0x28 && op <= 0x3e: // loads and stores
			c.memarg()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			c.r.uleb()
		case op == 0x41:
			c.r.sleb(32)
		case op == 0x42:
			c.r.sleb(64)
		case op == 0x43:
			c.r.skip(4)
		case op == 0x44:
			c.r.skip(8)
		case op >= 0x45 && op <= 0xc4: // numeric, sign extension
		case op == 0xd0: // ref.null
			c.r.byte()
		case op == 0xd2: // ref.func
			c.funcIndex(fmt.Sprintf("function %d: ref.func", index))
		case op == 0xfc:
			c.miscOp(index, at)
		case op == 0xfd:
			c.simdOp(index, at)
		case op == 0xfe:
			c.r.pos = at
			c.fail("function %d: atomic instruction %s (threads): not supported, atomics need a shared memory, which is not deterministic", index, atomicName(&c.r))
			return
		default:
			c.r.pos = at
			c.fail("function %d: unknown or unsupported opcode %#x", index, op)
			return
		}
	}
}

func (c *checker) memarg() {
	align := c.r.uleb()
	if align&0x40 != 0 { // multi-memory: a memory index follows
		c.r.uleb()
	}
	c.r.uleb() // offset
}

// miscOp reads the immediates of a 0xFC-prefixed instruction.
func (c *checker) miscOp(index, at int) {
	sub := c.r.uleb()
	switch {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init: data index, memory
		c.r.uleb()
		c.r.uleb()
	case sub == 9 || sub == 11 || sub == 13 || sub >= 15 && sub <= 17:
		// data.drop, memory.fill, elem.drop, table.grow/size/fill
		c.r.uleb()
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy
		c.r.uleb()
		c.r.uleb()
	default:
		if c.ok() {
			c.r.pos = at
			c.fail("function %d: unknown opcode 0xfc %d", index, sub)
		}
	}
}

// simdOp reads the immediates of a 0xFD-prefixed (fixed-width SIMD) instruction.
func (c *checker) simdOp(index, at int) {
	sub := c.r.uleb()
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // v128 loads and stores
		c.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		c.r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		c.r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		c.memarg()
		c.r.byte()
	case sub <= 255: // the rest take no immediates (wazero's validation names an unassigned one)
	default:
		if c.ok() {
			c.r.pos = at
			if name, ok := relaxedSIMD[sub]; ok {
				// Relaxed SIMD's results may differ from one CPU to another by design: a replay
				// on an ARM host could take another path than the pass on x86 that journaled it.
				c.fail("function %d: relaxed SIMD instruction %s (0xfd %d): not supported, its result depends on the host's CPU", index, name, sub)
				return
			}
			c.fail("function %d: unknown or unsupported opcode 0xfd %d", index, sub)
		}
	}
}

// relaxedSIMD names the relaxed SIMD proposal's instructions (0xFD-prefixed, 0x100-0x113).
var relaxedSIMD = map[uint64]string{
	0x100: "i8x16.relaxed_swizzle",
	0x101: "i32x4.relaxed_trunc_f32x4_s",
	0x102: "i32x4.relaxed_trunc_f32x4_u",
	0x103: "i32x4.relaxed_trunc_f64x2_s_zero",
	0x104: "i32x4.relaxed_trunc_f64x2_u_zero",
	0x105: "f32x4.relaxed_madd",
	0x106: "f32x4.relaxed_nmadd",
	0x107: "f64x2.relaxed_madd",
	0x108: "f64x2.relaxed_nmadd",
	0x109: "i8x16.relaxed_laneselect",
	0x10a: "i16x8.relaxed_laneselect",
	0x10b: "i32x4.relaxed_laneselect",
	0x10c: "i64x2.relaxed_laneselect",
	0x10d: "f32x4.relaxed_min",
	0x10e: "f32x4.relaxed_max",
	0x10f: "f64x2.relaxed_min",
	0x110: "f64x2.relaxed_max",
	0x111: "i16x8.relaxed_q15mulr_s",
	0x112: "i16x8.relaxed_dot_i8x16_i7x16_s",
	0x113: "i32x4.relaxed_dot_i8x16_i7x16_add_s",
}

// atomicName names the threads proposal's 0xFE-prefixed instruction at r (its prefix
// included), with its opcode, reading no further than the opcode.
func atomicName(r *reader) string {
	r.pos++ // the prefix
	sub := r.uleb()
	code := fmt.Sprintf("0xfe %#x", sub)
	switch {
	case r.err != nil:
		return "0xfe"
	case sub == 0x00:
		return "memory.atomic.notify (" + code + ")"
	case sub == 0x01:
		return "memory.atomic.wait32 (" + code + ")"
	case sub == 0x02:
		return "memory.atomic.wait64 (" + code + ")"
	case sub == 0x03:
		return "atomic.fence (" + code + ")"
	case sub >= 0x10 && sub <= 0x1d:
		names := [...]string{"i32.atomic.load", "i64.atomic.load", "i32.atomic.load8_u", "i32.atomic.load16_u",
			"i64.atomic.load8_u", "i64.atomic.load16_u", "i64.atomic.load32_u", "i32.atomic.store", "i64.atomic.store",
			"i32.atomic.store8", "i32.atomic.store16", "i64.atomic.store8", "i64.atomic.store16", "i64.atomic.store32"}
		return names[sub-0x10] + " (" + code + ")"
	case sub >= 0x1e && sub <= 0x4e:
		ops := [...]string{"add", "sub", "and", "or", "xor", "xchg", "cmpxchg"}
		widths := [...]string{"i32.atomic.rmw.", "i64.atomic.rmw.", "i32.atomic.rmw8.", "i32.atomic.rmw16.",
			"i64.atomic.rmw8.", "i64.atomic.rmw16.", "i64.atomic.rmw32."}
		i := sub - 0x1e
		name := widths[i%7] + ops[i/7]
		if i%7 >= 2 {
			name += "_u"
		}
		return name + " (" + code + ")"
	}
	return "(" + code + ")"
}

// sleb reads a signed LEB128 of at most bits bits (its length is what matters here).
func (r *reader) sleb(bits int) int64 {
	if r.err != nil {
		return 0
	}
	var (
		v     int64
		shift int
	)
	maxBytes := (bits + 6) / 7
	for i := 0; i < maxBytes; i++ {
		if r.pos >= len(r.b) {
			r.err = errors.New("unexpected end")
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	r.err = fmt.Errorf("signed LEB128 longer than %d bytes", maxBytes)
	return 0
}
