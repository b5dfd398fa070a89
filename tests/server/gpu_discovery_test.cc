#include "server/gpu_discovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace muster::server {
namespace {

namespace fs = std::filesystem;

// Captured on an H100 machine (driver 580): nvidia-smi's query output and the
// driver's /proc information file (tabs and all).
constexpr const char* kH100Csv =
    "0, GPU-8face100-b047-ae36-218e-bf7a95e31c23, NVIDIA H100 80GB HBM3, 81559, "
    "00000000:00:06.0\n";
constexpr const char* kH100Information =
    "Model: \t\t NVIDIA H100 80GB HBM3\n"
    "IRQ:   \t\t 41\n"
    "GPU UUID: \t GPU-8face100-b047-ae36-218e-bf7a95e31c23\n"
    "Video BIOS: \t 96.00.da.00.0c\n"
    "Bus Type: \t PCIe\n"
    "DMA Size: \t 52 bits\n"
    "DMA Mask: \t 0xfffffffffffff\n"
    "Bus Location: \t 0000:00:06.0\n"
    "Device Minor: \t 0\n"
    "GPU Firmware: \t 580.159.04\n"
    "GPU Excluded:\t No\n";

TEST(ParseNvidiaSmiCsvTest, OneGpu) {
  auto gpus = ParseNvidiaSmiCsv(kH100Csv);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].uuid, "GPU-8face100-b047-ae36-218e-bf7a95e31c23");
  EXPECT_EQ(gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0].memory_mib, 81559);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(gpus[0].numa_node, -1);
}

TEST(ParseNvidiaSmiCsvTest, SeveralGpusOddSpacingAndUnknownFields) {
  auto gpus = ParseNvidiaSmiCsv(
      "\n"
      "0,GPU-aaa,NVIDIA A100-SXM4-80GB,81920,00000000:1B:00.0\r\n"
      "  1 ,  GPU-bbb ,  NVIDIA A100-SXM4-80GB  , [N/A] ,  00000000:C1:00.0  \n"
      "2, [N/A], [N/A], [Not Supported], [N/A]");  // no final newline
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(gpus[0].memory_mib, 81920);
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[1].uuid, "GPU-bbb");
  EXPECT_EQ(gpus[1].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus[1].memory_mib, 0);
  EXPECT_EQ(gpus[1].pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ(gpus[2].index, 2);
  EXPECT_EQ(gpus[2].uuid, "");
  EXPECT_EQ(gpus[2].name, "");
  EXPECT_EQ(gpus[2].pci_bus_id, "");
}

TEST(ParseNvidiaSmiCsvTest, SkipsMessagesAndKeepsCommasInNames) {
  EXPECT_TRUE(ParseNvidiaSmiCsv("No devices were found\n").empty());
  EXPECT_TRUE(ParseNvidiaSmiCsv("").empty());
  // A header line (from a query without noheader) is not a device either.
  EXPECT_TRUE(ParseNvidiaSmiCsv("index, uuid, name, memory.total [MiB], pci.bus_id\n").empty());
  auto gpus = ParseNvidiaSmiCsv("3, GPU-x, Odd, Name, 1024, 0000:02:00.0\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 3);
  EXPECT_EQ(gpus[0].name, "Odd, Name");
  EXPECT_EQ(gpus[0].memory_mib, 1024);
}

TEST(ParseProcNvidiaInformationTest, RealFile) {
  auto gpu = ParseProcNvidiaInformation(kH100Information);
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->index, 0);
  EXPECT_EQ(gpu->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu->uuid, "GPU-8face100-b047-ae36-218e-bf7a95e31c23");
  EXPECT_EQ(gpu->pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(gpu->memory_mib, 0);
}

TEST(ParseProcNvidiaInformationTest, MinorOnlyAndNothing) {
  auto gpu = ParseProcNvidiaInformation("Device Minor: 5\n");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->index, 5);
  EXPECT_FALSE(ParseProcNvidiaInformation("Model: X\nIRQ: 3\n").has_value());
  EXPECT_FALSE(ParseProcNvidiaInformation("").has_value());
}

TEST(NormalizePciBusIdTest, BothFormsAndGarbage) {
  EXPECT_EQ(NormalizePciBusId("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(NormalizePciBusId("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(NormalizePciBusId(" 00000001:C1:1F.7 "), "0001:c1:1f.7");
  EXPECT_EQ(NormalizePciBusId("1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(NormalizePciBusId("10000:01:00.0"), "10000:01:00.0");  // VMD domains
  EXPECT_EQ(NormalizePciBusId(""), "");
  EXPECT_EQ(NormalizePciBusId("[N/A]"), "");
  EXPECT_EQ(NormalizePciBusId("0000:1b:00"), "");
  EXPECT_EQ(NormalizePciBusId("0000:1g:00.0"), "");
  EXPECT_EQ(NormalizePciBusId("0000:1b:00.8"), "");
}

// A fake /proc, /sys and nvidia-smi under a temporary directory.
class DiscoverGpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("muster-gpus-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    paths_.nvidia_smi = (root_ / "absent-nvidia-smi").string();
    paths_.proc_gpus = (root_ / "proc").string();
    paths_.sys_pci_devices = (root_ / "sys").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void FakeSmi(const std::string& script_body) {
    fs::path p = root_ / "nvidia-smi";
    Write(p, "#!/bin/sh\n" + script_body);
    ::chmod(p.c_str(), 0755);
    paths_.nvidia_smi = p.string();
  }
  void Numa(const std::string& bus, const std::string& node) {
    Write(root_ / "sys" / bus / "numa_node", node + "\n");
  }
  void ProcGpu(const std::string& bus, int minor, const std::string& model) {
    Write(root_ / "proc" / bus / "information",
          "Model: \t\t " + model + "\nGPU UUID: \t GPU-" + bus + "\nBus Location: \t " + bus +
              "\nDevice Minor: \t " + std::to_string(minor) + "\n");
  }

  fs::path root_;
  GpuDiscoveryPaths paths_;
};

TEST_F(DiscoverGpusTest, NvidiaSmiWithNumaFromSysfs) {
  FakeSmi(
      "printf '1, GPU-b, NVIDIA A100-SXM4-80GB, 81920, 00000000:C1:00.0\\n"
      "0, GPU-a, NVIDIA A100-SXM4-80GB, 81920, 00000000:1B:00.0\\n'\n");
  Numa("0000:1b:00.0", "0");
  Numa("0000:c1:00.0", "1");
  auto gpus = DiscoverGpus(paths_);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);  // sorted by index
  EXPECT_EQ(gpus[0].uuid, "GPU-a");
  EXPECT_EQ(gpus[0].numa_node, 0);
  EXPECT_EQ(gpus[1].uuid, "GPU-b");
  EXPECT_EQ(gpus[1].numa_node, 1);
}

TEST_F(DiscoverGpusTest, ProcFallbackNumbersInBusOrder) {
  FakeSmi("echo 'NVIDIA-SMI has failed' ; exit 9\n");
  // Device minors in reverse bus order: indices follow the bus, as nvidia-smi's do.
  ProcGpu("0000:18:00.0", 1, "NVIDIA L40S");
  ProcGpu("0000:28:00.0", 0, "NVIDIA L40S");
  Numa("0000:18:00.0", "-1");
  Numa("0000:28:00.0", "1");
  auto gpus = DiscoverGpus(paths_);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(gpus[0].numa_node, -1);
  EXPECT_EQ(gpus[0].name, "NVIDIA L40S");
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[1].pci_bus_id, "0000:28:00.0");
  EXPECT_EQ(gpus[1].numa_node, 1);
}

TEST_F(DiscoverGpusTest, NoNvidiaSmiReadsProc) {
  ProcGpu("0000:00:06.0", 0, "NVIDIA H100 80GB HBM3");
  auto gpus = DiscoverGpus(paths_);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0].numa_node, -1);  // no sysfs entry
}

TEST_F(DiscoverGpusTest, HungNvidiaSmiIsKilledAndProcUsed) {
  FakeSmi("exec sleep 30\n");
  paths_.timeout_ms = 200;
  ProcGpu("0000:00:06.0", 0, "NVIDIA H100 80GB HBM3");
  auto gpus = DiscoverGpus(paths_);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:00:06.0");
}

TEST_F(DiscoverGpusTest, NothingAnywhere) { EXPECT_TRUE(DiscoverGpus(paths_).empty()); }

}  // namespace
}  // namespace muster::server
