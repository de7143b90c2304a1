# The Fashion-MNIST sample's data reader (IDX files through zlib), shared by the sample and
# tests/test_idx_reader.cpp: included from samples/ and tests/, defined once, whichever of them
# is built.
find_package(ZLIB REQUIRED)
if(NOT TARGET vkcnn_fashion_mnist_data)
  add_library(vkcnn_fashion_mnist_data STATIC ${CMAKE_CURRENT_LIST_DIR}/idx_reader.cpp)
  target_include_directories(vkcnn_fashion_mnist_data PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(vkcnn_fashion_mnist_data PUBLIC ZLIB::ZLIB)
endif()
