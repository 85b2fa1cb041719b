// SHA-256 against FIPS 180-2's vectors, the artifact names' rule, and the artifact
// store: uploads appear whole or not at all, digests are checked and kept in sidecars.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include "builds/artifacts/artifact_store.h"
#include "platform/sha256.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;

TEST(Sha256Test, NistVectors) {
  EXPECT_EQ(HexOf(Sha256Of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexOf(Sha256Of("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexOf(Sha256Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;  // one million 'a', given in pieces
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(thousand);
  EXPECT_EQ(HexOf(million.Final()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, HashedInTheBackgroundTheDigestIsTheSame) {
  // More than BackgroundSha256::kMaxPendingBytes, in uneven pieces: Update waits for
  // the hashing thread, and the pieces are hashed in order.
  std::string bytes;
  for (size_t i = 0; bytes.size() < 3 * BackgroundSha256::kMaxPendingBytes; ++i) {
    bytes += std::string(1 + i % 70000, static_cast<char>('a' + i % 26));
  }
  BackgroundSha256 background;
  for (size_t at = 0, piece = 1; at < bytes.size(); at += piece, piece = piece * 7 % 100003 + 1) {
    background.Update(std::string_view(bytes).substr(at, piece));
  }
  EXPECT_EQ(HexOf(background.Final()), HexOf(Sha256Of(bytes)));
  BackgroundSha256 nothing;
  EXPECT_EQ(HexOf(nothing.Final()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BackgroundSha256 abandoned;  // dropped without Final: its thread stops
  abandoned.Update(bytes);
}

TEST(Sha256Test, HexRoundTripAndRefusals) {
  const Sha256Digest d = Sha256Of("abc");
  EXPECT_EQ(DigestFromHex(HexOf(d)), d);
  EXPECT_EQ(DigestFromHex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"), d);
  EXPECT_FALSE(DigestFromHex("ba78"));
  EXPECT_FALSE(DigestFromHex(std::string(63, '0') + "g"));
}

TEST(ArtifactNameTest, TheRuleAndItsMessage) {
  const std::string longest(kMaxArtifactName, 'a');
  for (std::string_view ok : {std::string_view("resnet50"), std::string_view("a"), std::string_view("model.onnx"),
                              std::string_view("x_y-z.1"), std::string_view(longest)}) {
    EXPECT_EQ(ArtifactNameError(ok, "model name"), "") << ok;
  }
  for (std::string_view bad : {"", ".", "..", ".hidden", "a/b", "a b", "ü", "a%2f", "a\\b", "a:b"}) {
    const std::string why = ArtifactNameError(bad, "model name");
    EXPECT_NE(why.find("A-Z a-z 0-9 . _ -"), std::string::npos) << bad;
  }
  EXPECT_NE(ArtifactNameError(std::string(129, 'a'), "file name"), "");
}

class ArtifactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trtwatch-artifacts-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    std::string error;
    store_ = ArtifactStore::Open(dir_.string(), &error);
    ASSERT_TRUE(store_) << error;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The names in the model's folder, dotfiles included.
  std::vector<std::string> FolderNames(const std::string& model) {
    std::vector<std::string> names;
    std::error_code ec;  // no folder: no names
    for (const auto& e : fs::directory_iterator(fs::path(store_->models_dir()) / model, ec)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
  std::unique_ptr<ArtifactStore> store_;
};

TEST_F(ArtifactStoreTest, AnUploadAppearsOnlyWhenCommitted) {
  bool bad_name = false;
  std::string error;
  auto upload = store_->BeginUpload("net", kModelFileName, "", &bad_name, &error);
  ASSERT_TRUE(upload) << error;
  ASSERT_TRUE(upload->Write("ab").ok());
  ASSERT_TRUE(upload->Write("c").ok());
  // Only the temporary dotfile so far: no model yet, none listed.
  EXPECT_FALSE(store_->Describe("net", &error));
  EXPECT_TRUE(store_->List(&error).empty());
  StoredFile stored;
  ASSERT_EQ(upload->Commit(Sha256Of("abc"), &stored, &error), Upload::Outcome::kStored) << error;
  EXPECT_EQ(stored.size, 3u);
  EXPECT_EQ(stored.sha256, HexOf(Sha256Of("abc")));
  const ModelInfo info = *store_->Describe("net", &error);
  EXPECT_TRUE(info.complete);
  ASSERT_EQ(info.files.size(), 1u);
  EXPECT_EQ(info.files[0].sha256, stored.sha256);
  EXPECT_EQ(FolderNames("net"), (std::vector<std::string>{".model.onnx.sha256", "model.onnx"}));
}

// A builder replaces or deletes only the models they uploaded first (docs/api.md, "Users").
TEST_F(ArtifactStoreTest, TheFirstStoredUploadsUserOwnsTheModel) {
  bool bad_name = false;
  std::string error;
  StoredFile stored;
  auto refused = store_->BeginUpload("net", kModelFileName, "mallory", &bad_name, &error);
  ASSERT_TRUE(refused && refused->Write("abc").ok());
  ASSERT_EQ(refused->Commit(Sha256Of("abd"), &stored, &error), Upload::Outcome::kDigestMismatch);
  refused.reset();  // a failed upload owns nothing
  const std::pair<std::string_view, std::string_view> uploads[] = {{"bo", kModelFileName}, {"bea", "w.bin"}};
  for (const auto& [user, file] : uploads) {
    auto upload = store_->BeginUpload("net", file, user, &bad_name, &error);
    ASSERT_TRUE(upload && upload->Write("abc").ok()) << error;
    ASSERT_EQ(upload->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored) << error;
  }
  EXPECT_EQ(store_->Describe("net", &error)->owner, "bo");
  EXPECT_EQ(store_->List(&error).at(0).owner, "bo");
  EXPECT_EQ(store_->Owner("net"), "bo");
  EXPECT_EQ(store_->Owner("none"), std::nullopt) << "no such model";

  std::ofstream(fs::path(store_->models_dir()) / "net" / ".owner") << std::string(200, 'x');  // not a name
  EXPECT_EQ(store_->Describe("net", &error)->owner, "") << "an unreadable owner is none: an admin's";
  auto open = store_->BeginUpload("open", kModelFileName, "", &bad_name, &error);  // no users: no owner
  ASSERT_TRUE(open && open->Write("abc").ok());
  ASSERT_EQ(open->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored) << error;
  EXPECT_EQ(store_->Describe("open", &error)->owner, "");
  EXPECT_EQ(store_->Owner("open"), "");
  EXPECT_FALSE(fs::exists(fs::path(store_->models_dir()) / "open" / ".owner"));
}

TEST_F(ArtifactStoreTest, ADigestMismatchStoresNothing) {
  bool bad_name = false;
  std::string error;
  auto upload = store_->BeginUpload("net", "weights.bin", "", &bad_name, &error);
  ASSERT_TRUE(upload->Write("abc").ok());
  StoredFile stored;
  EXPECT_EQ(upload->Commit(Sha256Of("abd"), &stored, &error), Upload::Outcome::kDigestMismatch);
  EXPECT_NE(error.find("nothing was stored"), std::string::npos);
  upload.reset();
  EXPECT_TRUE(FolderNames("net").empty());
  EXPECT_FALSE(fs::exists(fs::path(store_->models_dir()) / "net"));  // a failed first upload leaves no model
}

TEST_F(ArtifactStoreTest, AnAbandonedUploadLeavesNothing) {
  bool bad_name = false;
  std::string error;
  auto upload = store_->BeginUpload("net", kModelFileName, "", &bad_name, &error);
  ASSERT_TRUE(upload->Write("partial").ok());
  upload.reset();  // the client went away
  EXPECT_FALSE(fs::exists(fs::path(store_->models_dir()) / "net"));
  EXPECT_TRUE(store_->List(&error).empty());
}

TEST_F(ArtifactStoreTest, AFailedUploadBesideStoredFilesKeepsTheModel) {
  bool bad_name = false;
  std::string error;
  StoredFile stored;
  auto first = store_->BeginUpload("net", kModelFileName, "", &bad_name, &error);
  ASSERT_TRUE(first->Write("onnx").ok());
  ASSERT_EQ(first->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored);
  auto second = store_->BeginUpload("net", "weights.bin", "", &bad_name, &error);
  ASSERT_TRUE(second->Write("w").ok());
  second.reset();
  EXPECT_EQ(FolderNames("net"), (std::vector<std::string>{".model.onnx.sha256", "model.onnx"}));
}

TEST_F(ArtifactStoreTest, OpenRemovesWhatAKilledProcessLeftAndKeepsLiveUploads) {
  bool bad_name = false;
  std::string error;
  StoredFile stored;
  auto model = store_->BeginUpload("kept", kModelFileName, "", &bad_name, &error);
  ASSERT_TRUE(model->Write("onnx").ok());
  ASSERT_EQ(model->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored);
  auto live = store_->BeginUpload("live", kModelFileName, "", &bad_name, &error);  // under way, its file locked
  ASSERT_TRUE(live->Write("on").ok());
  // What a process killed mid-upload leaves: its temporary files, nobody holding them.
  const fs::path models = store_->models_dir();
  fs::create_directories(models / "crashed");
  std::ofstream(models / "crashed" / ".model.onnx.trtwatch-ab12cd34") << "partial";
  std::ofstream(models / "kept" / ".w.bin.trtwatch-zz99yy88") << "partial";
  std::ofstream(models / "kept" / ".notes.trtwatch-x") << "not one of ours";  // not the temporary name
  auto reopened = ArtifactStore::Open(dir_.string(), &error);
  ASSERT_TRUE(reopened) << error;
  EXPECT_FALSE(fs::exists(models / "crashed"));
  EXPECT_EQ(FolderNames("kept"), (std::vector<std::string>{".model.onnx.sha256", ".notes.trtwatch-x", "model.onnx"}));
  ASSERT_EQ(FolderNames("live").size(), 1u);  // the live upload's temporary file
  ASSERT_EQ(live->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored) << error;
  EXPECT_TRUE(reopened->Describe("live", &error)->complete);
}

TEST_F(ArtifactStoreTest, BadNamesAreRefusedBeforeAnythingIsMade) {
  bool bad_name = false;
  std::string error;
  EXPECT_FALSE(store_->BeginUpload("..", kModelFileName, "", &bad_name, &error));
  EXPECT_TRUE(bad_name);
  EXPECT_FALSE(store_->BeginUpload("net", "../x", "", &bad_name, &error));
  EXPECT_TRUE(bad_name);
  EXPECT_TRUE(fs::is_empty(store_->models_dir()));
}

TEST_F(ArtifactStoreTest, ListDescribeRemoveAndResolve) {
  bool bad_name = false;
  std::string error;
  auto data = store_->BeginUpload("net", "net.data", "", &bad_name, &error);
  StoredFile stored;
  ASSERT_EQ(data->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored);
  std::string resolved;
  EXPECT_FALSE(ResolveUploadedModel("net", store_->models_dir(), &resolved, &error));  // no model.onnx yet
  EXPECT_NE(error.find("PUT /models/net"), std::string::npos) << error;
  auto model = store_->BeginUpload("net", kModelFileName, "", &bad_name, &error);
  ASSERT_EQ(model->Commit(std::nullopt, &stored, &error), Upload::Outcome::kStored);
  ASSERT_TRUE(ResolveUploadedModel("net", store_->models_dir(), &resolved, &error)) << error;
  EXPECT_EQ(resolved, store_->models_dir() + "/net/model.onnx");
  const std::vector<ModelInfo> models = store_->List(&error);
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].files[0].name, "model.onnx");  // model.onnx first
  EXPECT_EQ(models[0].files[1].name, "net.data");
  EXPECT_EQ(store_->Remove("net", &error), ArtifactStore::RemoveOutcome::kRemoved);
  EXPECT_EQ(store_->Remove("net", &error), ArtifactStore::RemoveOutcome::kNotFound);
  EXPECT_FALSE(ResolveUploadedModel("../net", store_->models_dir(), &resolved, &error));
}

TEST_F(ArtifactStoreTest, FileDigestKeepsASidecarAndNoticesAChangedSize) {
  const std::string path = (dir_ / "b_1.engine").string();
  std::ofstream(path) << "abc";
  StoredFile file;
  std::string error;
  ASSERT_TRUE(FileDigest(path, &file, &error)) << error;
  EXPECT_EQ(file.sha256, HexOf(Sha256Of("abc")));
  EXPECT_TRUE(fs::exists(dir_ / ".b_1.engine.sha256"));
  std::ofstream(dir_ / ".b_1.engine.sha256") << std::string(64, 'f') << " 3\n";  // the sidecar is trusted
  ASSERT_TRUE(FileDigest(path, &file, &error));
  EXPECT_EQ(file.sha256, std::string(64, 'f'));
  std::ofstream(path) << "abcd";  // a different size: hashed again
  ASSERT_TRUE(FileDigest(path, &file, &error));
  EXPECT_EQ(file.sha256, HexOf(Sha256Of("abcd")));
  RemoveWithSidecar(path);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(dir_ / ".b_1.engine.sha256"));
}

}  // namespace
}  // namespace trtwatch::builds
