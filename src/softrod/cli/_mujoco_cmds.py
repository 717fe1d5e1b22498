"""MuJoCo commands (`softrod mjcf`, `render`, `view`, `bench mujoco`); see issue 3."""
