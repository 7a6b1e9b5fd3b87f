project = "edge"

service "api" {
  port    = 8080
  adress  = "127.0.0.1" # ERROR: Unsupported argument
}
