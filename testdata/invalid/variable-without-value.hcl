project = "edge"

variable "port" { # ERROR: No value for required variable
  type = number
}

service "api" {
  port = var.port
}
