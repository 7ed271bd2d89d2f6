// Placeholder translation unit until the kineto importer lands; holds no code.
