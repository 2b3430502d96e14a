package telemetry

import (
	"encoding/binary"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Class is the bounded part of a job's identity: what the attributes of its
// measurements are made of. Its byte slices may alias the job's metadata:
// they are read during the call that receives them, never kept.
type Class struct {
	// HasContext is false for a plain River job (no job context).
	HasContext bool
	// Timer is true for an occurrence of a timer.
	Timer bool
	// Exclusive is true when the job takes a key under the engine's
	// exclusive scope (Identity.ExclusiveKey is not empty).
	Exclusive            bool
	JobDefinitionID      []byte
	ProcessDefinitionKey []byte
	TenantID             []byte
	RetryCycle           []byte
}

// ClassOf returns the class of a job of identity id.
func ClassOf(id Identity) Class {
	return Class{
		HasContext:           id.HasContext,
		Timer:                id.Timer,
		Exclusive:            id.ExclusiveKey != "",
		JobDefinitionID:      []byte(id.JobDefinitionID),
		ProcessDefinitionKey: []byte(id.ProcessDefinitionKey),
		TenantID:             []byte(id.TenantID),
		RetryCycle:           []byte(id.RetryCycle),
	}
}

// JobReader reads what the instruments need from a job's row. The engine
// uses ContextReader, which reads the job context.
type JobReader interface {
	// Identity reads a job's whole identity (the span attributes of its
	// work, read only when a span records).
	Identity(job *rivertype.JobRow) Identity
	// Class reads the bounded part of it, for every job measured: it should
	// not allocate.
	Class(job *rivertype.JobRow) Class
}

// IdentifyFunc is a JobReader that reads the whole identity for both
// (ClassOf), allocating its strings.
type IdentifyFunc func(job *rivertype.JobRow) Identity

// Identity calls f.
func (f IdentifyFunc) Identity(job *rivertype.JobRow) Identity { return f(job) }

// Class returns the class of f's identity.
func (f IdentifyFunc) Class(job *rivertype.JobRow) Class { return ClassOf(f(job)) }

// series is one set of attributes of a measurement, with the options that
// record it: made once, then reused by every measurement with the same
// attributes (no attribute slice, set or option is built per measurement).
type series struct {
	set    attribute.Set
	add    []metric.AddOption
	record []metric.RecordOption
}

func newSeries(set attribute.Set) *series {
	opt := metric.WithAttributeSet(set)
	return &series{set: set, add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}}
}

// maxCachedSeries bounds the series cache: past it (tenants as an
// attribute, with very many tenants), a series is built for each
// measurement and not kept, and the SDK's own cardinality limit applies.
const maxCachedSeries = 10_000

// seriesCache holds the series measured so far, by key. A lookup reads an
// immutable map without a lock. A miss takes the lock and adds to the whole
// map; the lock-free map is rebuilt from it once the misses since the last
// rebuild outnumber its entries, so each series is copied a bounded number
// of times on average and the misses soon stop.
type seriesCache struct {
	read atomic.Pointer[map[string]*series]

	mu     sync.Mutex
	all    map[string]*series
	misses int
}

// load returns the series of key, or nil. It does not allocate.
func (c *seriesCache) load(key []byte) *series {
	if m := c.read.Load(); m != nil {
		return (*m)[string(key)]
	}
	return nil
}

// store returns the series of key, s when it has none yet.
func (c *seriesCache) store(key []byte, s *series) *series {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cached, ok := c.all[string(key)]; ok {
		s = cached
	} else {
		if len(c.all) >= maxCachedSeries {
			return s // measured, not kept
		}
		if c.all == nil {
			c.all = map[string]*series{}
		}
		c.all[string(key)] = s
	}
	c.misses++
	if read := c.read.Load(); read == nil || c.misses > len(*read) {
		m := maps.Clone(c.all)
		c.read.Store(&m)
		c.misses = 0
	}
	return s
}

// seriesOf returns the series of a job measurement of t: its queue, its
// kind when not empty, the job and process definitions of c when not empty,
// c's tenant when withTenant, and extraName's value extra when extraName is
// set. It allocates only for a series not seen before.
func seriesOf[T string | []byte](t *Instruments, queue, kind string, c *Class, withTenant bool, extraName attribute.Key, extra T) *series {
	var buf [192]byte
	key := appendKeyPart(buf[:0], queue)
	key = appendKeyPart(key, kind)
	key = appendKeyPart(key, c.JobDefinitionID)
	key = appendKeyPart(key, c.ProcessDefinitionKey)
	if withTenant {
		key = append(key, 1)
		key = appendKeyPart(key, c.TenantID)
	} else {
		key = append(key, 0)
	}
	key = appendKeyPart(key, string(extraName))
	key = appendKeyPart(key, extra)
	if s := t.series.load(key); s != nil {
		return s
	}
	kvs := make([]attribute.KeyValue, 0, 6)
	kvs = append(kvs, AttrQueue.String(queue))
	if kind != "" {
		kvs = append(kvs, AttrKind.String(kind))
	}
	if len(c.JobDefinitionID) > 0 {
		kvs = append(kvs, AttrJobDefinition.String(string(c.JobDefinitionID)))
	}
	if len(c.ProcessDefinitionKey) > 0 {
		kvs = append(kvs, AttrProcessDefinition.String(string(c.ProcessDefinitionKey)))
	}
	if withTenant {
		kvs = append(kvs, AttrTenant.String(string(c.TenantID)))
	}
	if extraName != "" {
		kvs = append(kvs, extraName.String(string(extra)))
	}
	return t.series.store(key, newSeries(attribute.NewSet(kvs...)))
}

// appendKeyPart appends one part of a series key: its length, then its
// bytes, so that no two lists of parts make the same key.
func appendKeyPart[T string | []byte](key []byte, part T) []byte {
	key = binary.AppendUvarint(key, uint64(len(part)))
	return append(key, part...)
}
