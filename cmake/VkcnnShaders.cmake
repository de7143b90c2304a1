# Compiles every glsl/*.comp to SPIR-V once per storage variant, reflects each module with
# SPIRV-Cross and embeds code and reflection into the library (nothing is read at run time).
#
# Variants differ only in the format of the storage images a kernel writes; arithmetic is float32
# in all of them. A kernel family that needs other compile-time switches uses its own .comp file.
# Each entry: suffix, image format, image type, and the variant it also defines (f16bits writes
# float16 images as their bits through a rg32ui view and is otherwise f16: image_io.glsl).

set(VKCNN_SHADER_VARIANTS "f16:rgba16f:image2DArray" "f32:rgba32f:image2DArray"
                          "u8:rgba8:image2DArray" "f16bits:rg32ui:uimage2DArray:f16")

function(vkcnn_embed_shaders target)
  file(GLOB comp_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/glsl/*.comp)
  list(SORT comp_files)
  set(spv_dir ${CMAKE_CURRENT_BINARY_DIR}/spirv)
  file(MAKE_DIRECTORY ${spv_dir})
  set(spv_files)
  set(embed_args)
  foreach(comp ${comp_files})
    get_filename_component(name ${comp} NAME_WE)
    foreach(variant ${VKCNN_SHADER_VARIANTS})
      string(REPLACE ":" ";" parts ${variant})
      list(GET parts 0 suffix)
      list(GET parts 1 format)
      list(GET parts 2 image_type)
      set(defines -DVKCNN_OUTPUT_FORMAT=${format} -DVKCNN_OUTPUT_IMAGE=${image_type}
                  -DVKCNN_VARIANT_${suffix}=1)
      list(LENGTH parts part_count)
      if(part_count GREATER 3)
        list(GET parts 3 also)
        list(APPEND defines -DVKCNN_VARIANT_${also}=1)
      endif()
      set(spv ${spv_dir}/${name}_${suffix}.spv)
      add_custom_command(
        OUTPUT ${spv}
        COMMAND ${GLSLANG_VALIDATOR} -V --target-env vulkan1.1 -Os
                ${defines} -I${PROJECT_SOURCE_DIR}/glsl --depfile ${spv}.d -o ${spv} ${comp}
        DEPENDS ${comp}
        DEPFILE ${spv}.d
        COMMENT "glslangValidator ${name}.comp (${suffix})"
        VERBATIM)
      list(APPEND spv_files ${spv})
      # Shaders SPIRV-Cross cannot parse (cooperative matrices) say so, and are reflected through
      # a build with VKCNN_REFLECTION defined: the same interface, a trivial body.
      file(STRINGS ${comp} separate REGEX "vkcnn-build: reflect-separately")
      if(separate)
        set(reflection ${spv_dir}/${name}_${suffix}.reflection.spv)
        add_custom_command(
          OUTPUT ${reflection}
          COMMAND ${GLSLANG_VALIDATOR} -V --target-env vulkan1.1
                  ${defines} -DVKCNN_REFLECTION=1 -I${PROJECT_SOURCE_DIR}/glsl
                  --depfile ${reflection}.d -o ${reflection} ${comp}
          DEPENDS ${comp}
          DEPFILE ${reflection}.d
          COMMENT "glslangValidator ${name}.comp (${suffix}, for reflection)"
          VERBATIM)
        list(APPEND spv_files ${reflection})
        list(APPEND embed_args ${name}:${suffix}:${spv}:${reflection})
      else()
        list(APPEND embed_args ${name}:${suffix}:${spv})
      endif()
    endforeach()
  endforeach()

  set(out_header ${CMAKE_CURRENT_BINARY_DIR}/generated/vkcnn_shader_ids.h)
  set(out_source ${CMAKE_CURRENT_BINARY_DIR}/generated/vkcnn_shader_table.cpp)
  add_custom_command(
    OUTPUT ${out_header} ${out_source}
    COMMAND vkcnn_spirv_embed ${out_header} ${out_source} ${embed_args}
    DEPENDS vkcnn_spirv_embed ${spv_files}
    COMMENT "Reflecting and embedding SPIR-V modules"
    VERBATIM)
  if(TARGET vkcnn_host_tools)
    add_dependencies(${target} vkcnn_host_tools)  # the embedder of a cross build
  endif()
  target_sources(${target} PRIVATE ${out_header} ${out_source})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()
