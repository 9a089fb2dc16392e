SELECT 1 FROM tokens WHERE hash = ?
