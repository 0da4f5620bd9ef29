# Two bare-metal nodes: one with an NVMe SSD, one with two HDDs (one entry per disk).
module "rack" {
  source = "../.."

  hosts = [
    { name = "ssd1", address = "192.0.2.10", user = "bench", key_file = "~/.ssh/lsmbench", data_dir = "/mnt/nvme/lsmbench", disk = "ssd" },
    { name = "hdd1-a", address = "192.0.2.11", user = "bench", key_file = "~/.ssh/lsmbench", data_dir = "/mnt/sdb/lsmbench", device = "/dev/sdb", disk = "hdd" },
    { name = "hdd1-b", address = "192.0.2.11", user = "bench", key_file = "~/.ssh/lsmbench", data_dir = "/mnt/sdc/lsmbench", device = "/dev/sdc", disk = "hdd" },
  ]
}

output "inventory" {
  description = "The nodes, for lsmbench."
  value       = module.rack.inventory
}
