// Placeholder translation unit until the nsys importer lands; holds no code.
