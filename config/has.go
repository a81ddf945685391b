package config

import "slices"

// Has reports whether the file has the table name (even empty): a section
// that a table turns on by being there ([agones]) reads it in its Check.
func (c *Config) Has(table string) bool { return slices.Contains(c.present, table) }
