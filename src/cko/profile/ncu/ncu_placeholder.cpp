// Placeholder translation unit until the ncu importer lands; holds no code.
