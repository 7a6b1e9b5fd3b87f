# Five services whose ports move with one variable, for the lock race test.
project = "race"

variable "base" {
  type = number
}

service "r1" {
  port = var.base + 1
}

service "r2" {
  port = var.base + 2
}

service "r3" {
  port = var.base + 3
}

service "r4" {
  port = var.base + 4
}

service "r5" {
  port = var.base + 5
}
