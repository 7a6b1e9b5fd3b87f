project = "edge"

servce "api" { # ERROR: Unsupported block type
  port = 8080
}
