service "b" {
  port = 8080
  frontend {
    rule = "Nope:/x" # ERROR: Invalid frontend rule
  }
}
