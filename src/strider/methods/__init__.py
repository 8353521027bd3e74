"""Controller families, one package each, built from ``strider.control``. Methods never import each other."""
