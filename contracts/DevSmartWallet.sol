// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title DevSmartWallet - a minimal smart-contract wallet (ERC-1271) for the devnet's tests.
/// @notice One owner key. A signature is the owner's 65-byte ECDSA signature (r, s, v) of the
///         digest, wrapped as `abi.encode(uint256 ownerIndex, bytes signature)` with index 0, the
///         way multi-owner wallets (Coinbase Smart Wallet) wrap theirs: what the wallet answers
///         is never a bare 65-byte signature, so a token must pass it through ERC-1271.
contract DevSmartWallet {
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    bytes4 private constant ERC1271_FAILURE = 0xffffffff;
    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4) {
        if (signature.length < 64) {
            return ERC1271_FAILURE;
        }
        (uint256 index, bytes memory inner) = abi.decode(signature, (uint256, bytes));
        if (index != 0 || inner.length != 65) {
            return ERC1271_FAILURE;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(inner, 0x20))
            s := mload(add(inner, 0x40))
            v := byte(0, mload(add(inner, 0x60)))
        }
        if (v < 27) {
            v += 27;
        }
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) {
            return ERC1271_FAILURE;
        }
        address signer = ecrecover(digest, v, r, s);
        return signer != address(0) && signer == owner ? ERC1271_MAGIC_VALUE : ERC1271_FAILURE;
    }
}

/// @title DevSmartWalletFactory - deploys DevSmartWallets at addresses known in advance (CREATE2),
///        so a wallet can sign before it exists (an ERC-6492 signature names this factory).
contract DevSmartWalletFactory {
    event WalletDeployed(address indexed wallet, address indexed owner);

    /// @notice Deploys the wallet of `owner` for `salt`, or returns it when it already exists.
    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = walletAddress(owner, salt);
        if (wallet.code.length > 0) {
            return wallet;
        }
        wallet = address(new DevSmartWallet{salt: salt}(owner));
        emit WalletDeployed(wallet, owner);
    }

    function walletAddress(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCode = keccak256(abi.encodePacked(type(DevSmartWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCode)))));
    }
}
